// SourceFile: a payload a source sends from its file, which is only ever read. Either complete
// when opened (PayloadStore::OpenSource, OpenHeld: hashed once, every chunk held), hashed as it
// is sent (OpenStreamedSource: a chunk is held once its batch is sealed; OpenStreamedFilling:
// the same for a file its sender still writes, each batch once the file holds it), or still
// being written by a sender that declared every digest (OpenFilling: a chunk is held once
// VerifyFilled found it whole and hashing to what the sender declared). Scrub reads a held
// copy the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "common/crypto.h"
#include "daemon/store/file_store.h"

namespace gridcast {

class SourceFile final : public FileStore, public GrowingSource, public StreamedSource {
 public:
  // Takes `fd` (a regular file, read only) and hashes it into a complete store; `label` names
  // it in errors. `weak` as for PayloadStore::OpenSource.
  static Result<std::unique_ptr<SourceFile>> Hash(int fd, const std::string& label, uint64_t chunk_bytes,
                                                  ChunkDigest digest, FileIo& io,
                                                  WeakChecksums weak = WeakChecksums::kSkip);
  // Takes `fd` (a regular file, read only), hashed as it is sent; nothing held yet. Of the
  // file's size, or of `size_bytes` (a file its sender still writes).
  static Result<std::unique_ptr<SourceFile>> Streamed(int fd, const std::string& label, uint64_t chunk_bytes,
                                                      ChunkDigest digest, FileIo& io, WeakChecksums weak,
                                                      std::optional<uint64_t> size_bytes = std::nullopt);
  // Takes `fd`, a file its sender fills with the payload `identity` declares; nothing held yet.
  static std::unique_ptr<SourceFile> Filling(int fd, std::string base_name, PayloadIdentity identity, FileIo& io);
  // Takes `fd`, a file its sender fills with `size_bytes` bytes it did not hash, hashed as it
  // is sent (PayloadStore::OpenStreamedFilling); nothing held yet.
  static Result<std::unique_ptr<SourceFile>> StreamedFilling(int fd, const std::string& label, uint64_t size_bytes,
                                                             uint64_t chunk_bytes, ChunkDigest digest, FileIo& io,
                                                             WeakChecksums weak,
                                                             std::optional<Digest> declared_sha256);

  Result<uint64_t> VerifyFilled() override;
  Result<Hashed> HashChunks(uint64_t first, uint32_t count, WeakChecksums weak) override;
  Result<std::optional<Digest>> HashWholeUpTo(uint64_t end) override;
  Status HoldSealed(uint64_t first, uint32_t count) override;
  StoreCapabilities capabilities() override {
    return {.growing = kind_ == Kind::kFilling ? this : nullptr, .streamed = kind_ == Kind::kStreamed ? this : nullptr};
  }

  // The chunks of this file whose bytes do not hash to the recorded digests (PayloadStore::Scrub),
  // which come from `recorded(first, count)` a window at a time. REQUIRES: opened with the
  // recorded header by Recorded().
  using RecordedDigests = std::function<Result<std::vector<Digest>>(uint64_t first, uint64_t count)>;
  Result<ScrubReport> Scrub(const RecordedDigests& recorded) const;
  // Takes `fd`, a held copy of the payload `identity` (a recorded header) describes, to scrub it.
  static std::unique_ptr<SourceFile> Recorded(int fd, std::string base_name, PayloadIdentity identity, FileIo& io);

 private:
  SourceFile(PayloadIdentity identity, std::string base_name, FileIo& io, int fd)
      : FileStore(std::move(identity), std::move(base_name), io, fd) {}
  // Takes `fd`, a regular file (closed and refused otherwise): a store of its size (or of
  // `size_bytes`), nothing held.
  static Result<std::unique_ptr<SourceFile>> Open(int fd, const std::string& label, uint64_t chunk_bytes,
                                                  ChunkDigest digest, FileIo& io,
                                                  std::optional<uint64_t> size_bytes = std::nullopt);
  // A file its sender still writes: its size so far; Aborted once the sender removed it,
  // InvalidArgument when it grew past the declared size.
  Result<uint64_t> FilledSize() const;
  // ... and OK once it holds the bytes below `end` (Unavailable until then).
  Status CheckFilledTo(uint64_t end) const;

  enum class Kind { kComplete, kStreamed, kFilling };
  Kind kind_ = Kind::kComplete;
  // The whole payload's SHA-256 so far, and of how many bytes (kStreamed, kFilling).
  std::unique_ptr<Sha256Stream> whole_;
  uint64_t whole_bytes_ = 0;
  std::vector<uint8_t> whole_buffer_;     // kStreamed: reused from read to read
  std::optional<Digest> whole_digest_;    // kStreamed: once every byte is in
  // kStreamed: its sender still writes it (StreamedFilling), and what it said the SHA-256 is.
  bool filled_by_sender_ = false;
  std::optional<Digest> declared_sha256_;
  // kFilling: the next chunk VerifyFilled() waits for.
  uint64_t next_filled_ = 0;
};

}  // namespace gridcast
