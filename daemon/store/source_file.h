// SourceFile: a payload a source sends from its file, which is only ever read. Either complete
// when opened (PayloadStore::OpenSource, OpenHeld: hashed once, every chunk held), or still
// being written by its sender (OpenFilling: a chunk is held once VerifyFilled found it whole
// and hashing to what the sender declared). Scrub reads a held copy the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/crypto.h"
#include "daemon/store/file_store.h"

namespace gridcast {

class SourceFile final : public FileStore, public GrowingSource {
 public:
  // Takes `fd` (a regular file, read only) and hashes it into a complete store; `label` names
  // it in errors. `weak` as for PayloadStore::OpenSource.
  static Result<std::unique_ptr<SourceFile>> Hash(int fd, const std::string& label, uint64_t chunk_bytes,
                                                  ChunkDigest digest, FileIo& io,
                                                  WeakChecksums weak = WeakChecksums::kSkip);
  // Takes `fd`, a file its sender fills with the payload `identity` declares; nothing held yet.
  static std::unique_ptr<SourceFile> Filling(int fd, std::string base_name, PayloadIdentity identity, FileIo& io);

  Result<uint64_t> VerifyFilled() override;
  StoreCapabilities capabilities() override { return {.growing = filled_whole_ != nullptr ? this : nullptr}; }

  // The chunks of this file whose bytes do not hash to the identity's (PayloadStore::Scrub).
  // REQUIRES: opened with the recorded identity by Recorded().
  Result<ScrubReport> Scrub() const;
  // Takes `fd`, a held copy of the payload `identity` records, to scrub it.
  static std::unique_ptr<SourceFile> Recorded(int fd, std::string base_name, PayloadIdentity identity, FileIo& io);

 private:
  SourceFile(PayloadIdentity identity, std::string base_name, FileIo& io, int fd)
      : FileStore(std::move(identity), std::move(base_name), io, fd) {}

  // OpenFilling: the next chunk VerifyFilled() waits for, and the whole payload's hash so far.
  uint64_t next_filled_ = 0;
  std::unique_ptr<Sha256Stream> filled_whole_;
};

}  // namespace gridcast
