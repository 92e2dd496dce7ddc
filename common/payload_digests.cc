#include "common/payload_digests.h"

#include <algorithm>
#include <thread>

namespace gridcast {

Result<PayloadDigests> DigestPayload(uint64_t size_bytes, uint64_t chunk_bytes, const ReadPayloadPiece& read) {
  if (chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  const uint64_t n = (size_bytes + chunk_bytes - 1) / chunk_bytes;
  PayloadDigests digests;
  digests.chunk_hashes.resize(n);
  Status whole_status;
  std::thread whole_thread([&] {
    Sha256Stream whole;
    std::vector<uint8_t> scratch;
    const uint64_t piece = std::min<uint64_t>(uint64_t{4} << 20, std::max<uint64_t>(size_bytes, 1));
    for (uint64_t offset = 0; offset < size_bytes; offset += piece) {
      Result<std::span<const uint8_t>> bytes = read(offset, std::min(piece, size_bytes - offset), scratch);
      if (!bytes.ok()) {
        whole_status = bytes.status();
        return;
      }
      whole.Update(*bytes);
    }
    digests.sha256 = whole.Finish();
  });
  const uint64_t chunk_threads = std::max(1u, std::thread::hardware_concurrency() - 1);
  std::vector<Status> chunk_status(chunk_threads);
  std::vector<std::thread> chunk_workers;
  for (uint64_t t = 0; t < chunk_threads; ++t) {
    chunk_workers.emplace_back([&, t] {
      std::vector<uint8_t> scratch;
      for (uint64_t c = n * t / chunk_threads; c < n * (t + 1) / chunk_threads; ++c) {
        const uint64_t offset = c * chunk_bytes;
        Result<std::span<const uint8_t>> bytes = read(offset, std::min(chunk_bytes, size_bytes - offset), scratch);
        if (!bytes.ok()) {
          chunk_status[t] = bytes.status();
          return;
        }
        digests.chunk_hashes[c] = Sha256(*bytes);
      }
    });
  }
  whole_thread.join();
  for (std::thread& worker : chunk_workers) worker.join();
  GRIDCAST_RETURN_IF_ERROR(whole_status);
  for (const Status& status : chunk_status) GRIDCAST_RETURN_IF_ERROR(status);
  return digests;
}

}  // namespace gridcast
