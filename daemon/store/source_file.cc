#include "daemon/store/source_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "common/payload_digests.h"
#include "daemon/store/state_files.h"
#include "delta/rolling_checksum.h"

namespace gridcast {

Result<std::unique_ptr<SourceFile>> SourceFile::Open(int fd, const std::string& label, uint64_t chunk_bytes,
                                                     ChunkDigest digest, FileIo& io,
                                                     std::optional<uint64_t> size_bytes) {
  struct stat st {};
  if (chunk_bytes == 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return chunk_bytes == 0 ? Status::InvalidArgument("chunk size must be positive")
                            : Status::InvalidArgument(label + " is not a regular file");
  }
  PayloadIdentity id;
  id.size_bytes = size_bytes.value_or(static_cast<uint64_t>(st.st_size));
  id.chunk_bytes = chunk_bytes;
  id.digest = digest;
  return std::unique_ptr<SourceFile>(new SourceFile(std::move(id), label, io, fd));
}

Result<std::unique_ptr<SourceFile>> SourceFile::Hash(int fd, const std::string& label, uint64_t chunk_bytes,
                                                     ChunkDigest digest, FileIo& io, WeakChecksums weak) {
  // The store owns fd from here on (and closes it on every error below).
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store, Open(fd, label, chunk_bytes, digest, io));
  const PayloadIdentity& id = store->identity_;
  std::vector<uint32_t> weak_checksums(weak == WeakChecksums::kCompute ? id.NumChunks() : 0);
  VisitChunk summarize;
  if (weak == WeakChecksums::kCompute) {
    summarize = [&](uint64_t c, std::span<const uint8_t> bytes) { weak_checksums[c] = WeakChecksum(bytes); };
  }
  // Two passes over the file before the first byte can move, on every core.
  GRIDCAST_ASSIGN_OR_RETURN(
      PayloadDigests digests,
      DigestPayload(id.size_bytes, chunk_bytes, digest,
                    [&](uint64_t offset, uint64_t length, std::vector<uint8_t>& scratch)
                        -> Result<std::span<const uint8_t>> {
                      scratch.resize(length);
                      GRIDCAST_RETURN_IF_ERROR(PreadFull(io, fd, scratch, offset).WithContext(label));
                      return std::span<const uint8_t>(scratch);
                    },
                    WholeDigest::kSha256, summarize));
  store->identity_.weak_checksums = std::move(weak_checksums);
  store->identity_.chunk_hashes = std::move(digests.chunk_hashes);
  store->identity_.sha256 = digests.sha256;
  store->HoldAll();
  return store;
}

Result<std::unique_ptr<SourceFile>> SourceFile::Streamed(int fd, const std::string& label, uint64_t chunk_bytes,
                                                         ChunkDigest digest, FileIo& io, WeakChecksums weak,
                                                         std::optional<uint64_t> size_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store, Open(fd, label, chunk_bytes, digest, io, size_bytes));
  store->identity_.streams_weak_checksums = weak == WeakChecksums::kCompute;
  store->kind_ = Kind::kStreamed;
  store->whole_ = std::make_unique<Sha256Stream>();
  // Nothing to finalize: the file is the sender's, under its own name.
  store->finalized_ = true;
  return store;
}

Result<std::unique_ptr<SourceFile>> SourceFile::StreamedFilling(int fd, const std::string& label, uint64_t size_bytes,
                                                                uint64_t chunk_bytes, ChunkDigest digest, FileIo& io,
                                                                WeakChecksums weak,
                                                                std::optional<Digest> declared_sha256) {
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store,
                            Streamed(fd, label, chunk_bytes, digest, io, weak, size_bytes));
  store->filled_by_sender_ = true;
  store->declared_sha256_ = declared_sha256;
  return store;
}

Result<uint64_t> SourceFile::FilledSize() const {
  struct stat st {};
  if (fstat(fd_, &st) != 0) return ErrnoStatus("stat " + base_name_, errno);
  // A sender that gives up removes the file: the rest will not come.
  if (st.st_nlink == 0) return Status::Aborted(base_name_ + " was removed by its sender before it was whole");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > identity_.size_bytes) {
    return Status::InvalidArgument(base_name_ + " grew to " + std::to_string(size) + " bytes, past the " +
                                   std::to_string(identity_.size_bytes) + " its sender declared");
  }
  return size;
}

Status SourceFile::CheckFilledTo(uint64_t end) const {
  GRIDCAST_ASSIGN_OR_RETURN(const uint64_t size, FilledSize());
  if (size < end) return Status::Unavailable(base_name_ + " holds " + std::to_string(size) + " bytes so far");
  return Status::Ok();
}

Result<StreamedSource::Hashed> SourceFile::HashChunks(uint64_t first, uint32_t count, WeakChecksums weak) {
  if (filled_by_sender_) {
    GRIDCAST_RETURN_IF_ERROR(CheckFilledTo(std::min(identity_.size_bytes, ChunkOffset(first + count))));
  }
  Hashed hashed;
  hashed.digests.reserve(count);
  if (weak == WeakChecksums::kCompute) hashed.weak.reserve(count);
  GRIDCAST_RETURN_IF_ERROR(
      HashStoredChunks(first, first + count, [](uint64_t) { return true; },
                       [&](uint64_t, const Digest& digest, std::span<const uint8_t> bytes) {
                         hashed.digests.push_back(digest);
                         if (weak == WeakChecksums::kCompute) hashed.weak.push_back(WeakChecksum(bytes));
                         return true;
                       })
          .WithContext(base_name_));
  if (hashed.digests.size() != count) return Status::InvalidArgument("chunks past the end of " + base_name_);
  return hashed;
}

Result<std::optional<Digest>> SourceFile::HashWholeUpTo(uint64_t end) {
  end = std::min(end, identity_.size_bytes);
  constexpr uint64_t kReadBytes = uint64_t{4} << 20;
  while (whole_bytes_ < end) {
    whole_buffer_.resize(std::min(kReadBytes, end - whole_bytes_));
    GRIDCAST_RETURN_IF_ERROR(PreadFull(*io_, fd_, whole_buffer_, whole_bytes_).WithContext(base_name_));
    whole_->Update(whole_buffer_);
    whole_bytes_ += whole_buffer_.size();
  }
  if (whole_bytes_ == identity_.size_bytes && !whole_digest_) {
    whole_digest_ = whole_->Finish();
    whole_buffer_ = {};
    if (declared_sha256_ && *whole_digest_ != *declared_sha256_) {
      return Status::DataLoss(base_name_ + " as written differs from the whole-payload SHA-256 its sender declared");
    }
  }
  return whole_digest_;
}

Status SourceFile::HoldSealed(uint64_t first, uint32_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint64_t c = first; c < first + count && c < identity_.NumChunks(); ++c) {
    if (!have_[c]) GRIDCAST_RETURN_IF_ERROR(MarkVerified(c));
  }
  return Status::Ok();
}

std::unique_ptr<SourceFile> SourceFile::Filling(int fd, std::string base_name, PayloadIdentity identity, FileIo& io) {
  std::unique_ptr<SourceFile> store(new SourceFile(std::move(identity), std::move(base_name), io, fd));
  store->kind_ = Kind::kFilling;
  store->whole_ = std::make_unique<Sha256Stream>();
  // Nothing to finalize: the file is the sender's, under its own name.
  store->finalized_ = true;
  return store;
}

std::unique_ptr<SourceFile> SourceFile::Recorded(int fd, std::string base_name, PayloadIdentity identity, FileIo& io) {
  return std::unique_ptr<SourceFile>(new SourceFile(std::move(identity), std::move(base_name), io, fd));
}

Result<uint64_t> SourceFile::VerifyFilled() {
  GRIDCAST_ASSIGN_OR_RETURN(const uint64_t size, FilledSize());
  uint64_t newly = 0;
  std::vector<uint8_t> buffer;  // taken only when a chunk is there: most polls find none
  for (; next_filled_ < identity_.NumChunks(); ++next_filled_, ++newly) {
    const uint64_t c = next_filled_;
    if (ChunkOffset(c) + identity_.ChunkSize(c) > size) break;
    buffer.resize(identity_.LargestChunk());
    GRIDCAST_ASSIGN_OR_RETURN(const Digest digest, HashStoredChunk(c, buffer));
    if (digest != identity_.chunk_hashes[c]) {
      return Status::DataLoss(ChunkName(c) + " as written differs from the " + std::string(DigestName(identity_.digest)) +
                              " its sender declared for it");
    }
    whole_->Update({buffer.data(), identity_.ChunkSize(c)});
    if (c + 1 == identity_.NumChunks() && whole_->Finish() != identity_.sha256) {
      return Status::DataLoss(base_name_ + " as written differs from the whole-payload SHA-256 its sender declared");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    GRIDCAST_RETURN_IF_ERROR(MarkVerified(c));
  }
  return newly;
}

Result<ScrubReport> SourceFile::Scrub(const RecordedDigests& recorded) const {
  // Digests of this many chunks in memory at once: 2 MiB.
  constexpr uint64_t kWindowChunks = uint64_t{1} << 16;
  struct stat st {};
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("'" + base_name_ + "' is not a regular file");
  }
  ScrubReport report;
  report.chunks = identity_.NumChunks();
  const auto whole = [&](uint64_t c) {
    return ChunkOffset(c) + identity_.ChunkSize(c) <= static_cast<uint64_t>(st.st_size);
  };
  for (uint64_t first = 0; first < report.chunks; first += kWindowChunks) {
    const uint64_t end = std::min(report.chunks, first + kWindowChunks);
    GRIDCAST_ASSIGN_OR_RETURN(const std::vector<Digest> expected, recorded(first, end - first));
    if (expected.size() != end - first) return Status::DataLoss("the chunk list of '" + base_name_ + "' is short");
    GRIDCAST_RETURN_IF_ERROR(HashStoredChunks(first, end, whole, [&](uint64_t c, const Digest& digest, std::span<const uint8_t>) {
                               if (digest != expected[c - first]) report.bad_chunks.push_back(c);
                               return true;
                             }).WithContext(base_name_));
  }
  // A chunk cut off by a shorter file is as bad as a changed one.
  for (uint64_t c = 0; c < report.chunks; ++c) {
    if (!whole(c)) report.bad_chunks.push_back(c);
  }
  std::sort(report.bad_chunks.begin(), report.bad_chunks.end());
  return report;
}

// The factories of the kinds a source reads.

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenSource(const std::string& path, uint64_t chunk_bytes,
                                                               ChunkDigest digest, FileIo& io, WeakChecksums weak) {
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store,
                            SourceFile::Hash(fd, path, chunk_bytes, digest, io, weak));
  return std::unique_ptr<PayloadStore>(std::move(store));
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenStreamedSource(const std::string& path, uint64_t chunk_bytes,
                                                                       ChunkDigest digest, FileIo& io,
                                                                       WeakChecksums weak) {
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store,
                            SourceFile::Streamed(fd, path, chunk_bytes, digest, io, weak));
  return std::unique_ptr<PayloadStore>(std::move(store));
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenFilling(const std::string& path, PayloadIdentity identity,
                                                                FileIo& io) {
  GRIDCAST_RETURN_IF_ERROR(CheckReceivable(identity));
  if (identity.size_bytes == 0 && identity.sha256 != Sha256({})) {
    return Status::InvalidArgument("the SHA-256 declared for an empty payload is not that of no bytes");
  }
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(path + " is not a regular file");
  }
  return std::unique_ptr<PayloadStore>(
      SourceFile::Filling(fd, std::filesystem::path(path).filename().string(), std::move(identity), io));
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenStreamedFilling(const std::string& path, uint64_t size_bytes,
                                                                        uint64_t chunk_bytes, ChunkDigest digest,
                                                                        WeakChecksums weak,
                                                                        std::optional<Digest> declared_sha256,
                                                                        FileIo& io) {
  if (size_bytes == 0) return Status::InvalidArgument("an empty payload has nothing to stream");
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store,
                            SourceFile::StreamedFilling(fd, std::filesystem::path(path).filename().string(), size_bytes,
                                                        chunk_bytes, digest, io, weak, declared_sha256));
  GRIDCAST_RETURN_IF_ERROR(CheckReceivable(store->identity()));
  return std::unique_ptr<PayloadStore>(std::move(store));
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenHeld(
    const std::string& data_dir, const std::string& name,
    const std::function<uint64_t(uint64_t size_bytes)>& chunk_bytes_for_size, FileIo& io) {
  if (name.ends_with(".part")) {
    return Status::InvalidArgument("'" + name + "' is a payload still being received, not a complete one");
  }
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/false));
  const int fd = io.OpenAt(parent.first.get(), parent.second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0 && errno == ELOOP) return Status::InvalidArgument("payload name '" + name + "' is a symlink");
  if (fd < 0) return Status::NotFound("this daemon holds no complete payload '" + name + "'");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument("payload '" + name + "' is not a regular file");
  }
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<SourceFile> store,
                            SourceFile::Hash(fd, name, chunk_bytes_for_size(static_cast<uint64_t>(st.st_size)),
                                             ChunkDigest::kSha256, io));
  return std::unique_ptr<PayloadStore>(std::move(store));
}

Result<ScrubReport> PayloadStore::Scrub(const std::string& data_dir, const std::string& name, FileIo& io) {
  GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity header, RecordedHeader(data_dir, name, io));
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/false));
  const int fd = io.OpenAt(parent.first.get(), parent.second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("this daemon holds no complete payload '" + name + "'");
  const std::string list = PayloadStatePath(data_dir, name, ".chunks");
  return SourceFile::Recorded(fd, name, std::move(header), io)->Scrub([&](uint64_t first, uint64_t count) {
    return ReadChunkListDigests(io, list, name, first, count);
  });
}

}  // namespace gridcast
