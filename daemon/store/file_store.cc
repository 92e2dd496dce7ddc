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
  GRIDCAST_RETURN_IF_ERROR(CheckDigest(chunk, digest));
  GRIDCAST_RETURN_IF_ERROR(MarkVerified(chunk));
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

Status FileStore::HashStoredChunks(uint64_t first, uint64_t end, const std::function<bool(uint64_t chunk)>& wanted,
                                   const HashedChunk& hashed) const {
  // A batch is at most 16 chunks and 8 MiB (or one chunk): what multi-buffer SHA-256 takes.
  const uint64_t chunk_bytes = identity_.LargestChunk();
  const uint64_t batch = std::clamp<uint64_t>((8 << 20) / chunk_bytes, 1, kChunksHashedTogether);
  // Taken at the first chunk wanted: a resume looks through each batch of digests, most of
  // them often with nothing to hash (fresh pages cost here, docs/performance.md).
  std::vector<uint8_t> buffer;
  std::vector<uint64_t> chunks;
  std::vector<std::span<const uint8_t>> bytes;
  std::vector<Digest> digests(batch);
  auto flush = [&]() -> Result<bool> {
    HashChunks(identity_.digest, bytes, std::span(digests).first(bytes.size()));
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (!hashed(chunks[i], digests[i], bytes[i])) return false;
    }
    chunks.clear();
    bytes.clear();
    return true;
  };
  for (uint64_t c = first; c < std::min(end, identity_.NumChunks()); ++c) {
    if (!wanted(c)) continue;
    buffer.resize(batch * chunk_bytes);
    const std::span<uint8_t> slot(buffer.data() + chunks.size() * chunk_bytes, identity_.ChunkSize(c));
    if (Status read = PreadFull(*io_, fd_, slot, ChunkOffset(c)); !read.ok()) {
      (void)flush();  // the chunks read before the error are shown
      return read;
    }
    chunks.push_back(c);
    bytes.push_back(slot);
    if (chunks.size() == batch) {
      GRIDCAST_ASSIGN_OR_RETURN(const bool more, flush());
      if (!more) return Status::Ok();
    }
  }
  return flush().status();
}

Result<Digest> FileStore::HashStoredChunk(uint64_t chunk, std::vector<uint8_t>& buffer) const {
  std::span<uint8_t> bytes(buffer.data(), identity_.ChunkSize(chunk));
  GRIDCAST_RETURN_IF_ERROR(PreadFull(*io_, fd_, bytes, ChunkOffset(chunk)));
  return HashChunk(identity_.digest, bytes);
}

}  // namespace gridcast
