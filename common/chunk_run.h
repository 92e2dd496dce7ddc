// ChunkRun: chunks [begin, end) of a payload, all alike in some way (all held, say). The
// handshake's Accept lists a child's held chunks as runs (daemon/transport/frame.h), which
// the store computes (PayloadStore::HeldRuns).
#pragma once

#include <cstdint>

namespace gridcast {

struct ChunkRun {
  uint64_t begin = 0;
  uint64_t end = 0;
  bool operator==(const ChunkRun&) const = default;
};

}  // namespace gridcast
