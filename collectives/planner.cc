#include "collectives/planner.h"

#include <algorithm>
#include <bit>

#include "collectives/validate_plan.h"

namespace gridcast {

uint64_t ChunkBytesForCount(uint64_t payload_bytes, uint64_t chunks, uint64_t min_bytes, uint64_t max_bytes) {
  return std::clamp(std::bit_ceil((payload_bytes + chunks - 1) / chunks), min_bytes, max_bytes);
}

uint64_t Planner::DefaultChunkBytes(uint64_t payload_bytes) const {
  return std::max(ChunkBytesForCount(payload_bytes, 2048, 64 << 10, 4 << 20),
                  SmallestChunkBytes(payload_bytes, /*swarm=*/false));
}

}  // namespace gridcast
