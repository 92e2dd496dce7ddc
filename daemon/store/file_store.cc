#include "daemon/store/file_store.h"

#include <unistd.h>

namespace gridcast {

FileStore::~FileStore() {
  if (fd_ >= 0) close(fd_);
}

Status FileStore::WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) {
  if (chunk >= identity_.NumChunks() || offset > identity_.ChunkSize(chunk) ||
      data.size() > identity_.ChunkSize(chunk) - offset) {
    return Status::InvalidArgument("block of " + std::to_string(data.size()) + " bytes at " +
                                   std::to_string(offset) + " is outside chunk " + std::to_string(chunk));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_[chunk] || finalized_ || Claimed(chunk)) return Status::Ok();
  return PwriteFull(*io_, fd_, data, ChunkOffset(chunk) + offset);
}

Status FileStore::VerifyStoredChunk(uint64_t chunk, bool* newly_verified) {
  if (newly_verified != nullptr) *newly_verified = false;
  if (chunk >= identity_.NumChunks()) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is out of range");
  }
  // Read and hash under the lock: no block may change the bytes between the check and the mark.
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_[chunk]) return Status::Ok();  // e.g. the push path's chunks handed to libtorrent
  std::vector<uint8_t> buffer(identity_.ChunkSize(chunk));
  GRIDCAST_ASSIGN_OR_RETURN(Digest digest, HashStoredChunk(chunk, buffer));
  if (digest != identity_.chunk_hashes[chunk]) return DigestMismatch(chunk);
  GRIDCAST_RETURN_IF_ERROR(MarkVerified(chunk, digest));
  if (newly_verified != nullptr) *newly_verified = true;
  return Status::Ok();
}

Result<ChunkRef> FileStore::ChunkAt(uint64_t chunk) const {
  return ChunkRef::InFile(fd_, ChunkOffset(chunk), identity_.ChunkSize(chunk));
}

Status FileStore::PutVerified(const ReceivedChunk& received) {
  return PwriteFull(*io_, fd_, received.data, ChunkOffset(received.chunk));
}

Status FileStore::ReadStored(uint64_t offset, std::span<uint8_t> out) const {
  return PreadFull(*io_, fd_, out, offset);
}

Result<Digest> FileStore::HashStoredChunk(uint64_t chunk, std::vector<uint8_t>& buffer) const {
  std::span<uint8_t> bytes(buffer.data(), identity_.ChunkSize(chunk));
  GRIDCAST_RETURN_IF_ERROR(PreadFull(*io_, fd_, bytes, ChunkOffset(chunk)));
  return HashChunk(identity_.digest, bytes);
}

}  // namespace gridcast
