#include "common/payload_digests.h"
#include "common/units.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

namespace gridcast {

Result<PayloadDigests> DigestPayload(uint64_t size_bytes, uint64_t chunk_bytes, ChunkDigest digest,
                                     const ReadPayloadPiece& read, WholeDigest whole, const VisitChunk& visit) {
  if (chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  const uint64_t n = CeilDiv(size_bytes, chunk_bytes);
  PayloadDigests digests;
  digests.chunk_hashes.resize(n);
  Status whole_status;
  std::atomic<bool> stop{false};  // a thread could not start: the others end early
  auto hash_whole = [&] {
    Sha256Stream stream;
    std::vector<uint8_t> scratch;
    const uint64_t piece = std::min<uint64_t>(uint64_t{4} << 20, std::max<uint64_t>(size_bytes, 1));
    for (uint64_t offset = 0; offset < size_bytes && !stop; offset += piece) {
      Result<std::span<const uint8_t>> bytes = read(offset, std::min(piece, size_bytes - offset), scratch);
      if (!bytes.ok()) {
        whole_status = bytes.status();
        return;
      }
      stream.Update(*bytes);
    }
    digests.sha256 = stream.Finish();
  };
  // hardware_concurrency() may say 0 (unknown): then one thread for the chunks.
  const uint64_t cores = std::max(2u, std::thread::hardware_concurrency());
  const uint64_t chunk_threads = whole == WholeDigest::kSha256 ? cores - 1 : cores;
  std::vector<Status> chunk_status(chunk_threads);
  auto hash_chunks = [&](uint64_t t) {
    std::vector<uint8_t> scratch;
    for (uint64_t c = n * t / chunk_threads; c < n * (t + 1) / chunk_threads && !stop; ++c) {
      const uint64_t offset = c * chunk_bytes;
      Result<std::span<const uint8_t>> bytes = read(offset, std::min(chunk_bytes, size_bytes - offset), scratch);
      if (!bytes.ok()) {
        chunk_status[t] = bytes.status();
        return;
      }
      digests.chunk_hashes[c] = HashChunk(digest, *bytes);
      if (visit) visit(c, *bytes);
    }
  };
  std::vector<std::thread> threads;
  Status started;
  try {
    if (whole == WholeDigest::kSha256) threads.emplace_back(hash_whole);
    for (uint64_t t = 0; t < chunk_threads; ++t) threads.emplace_back(hash_chunks, t);
  } catch (const std::system_error& e) {
    stop = true;
    started = Status::ResourceExhausted(std::string("cannot start a hashing thread: ") + e.what());
  }
  for (std::thread& thread : threads) thread.join();
  GRIDCAST_RETURN_IF_ERROR(started);
  GRIDCAST_RETURN_IF_ERROR(whole_status);
  for (const Status& status : chunk_status) GRIDCAST_RETURN_IF_ERROR(status);
  if (whole == WholeDigest::kChunkList) digests.sha256 = ChunkListDigest(digest, digests.chunk_hashes);
  return digests;
}

}  // namespace gridcast
