// Planner: turns a network model and a payload into a Plan. One algorithm per class, one class
// per file in collectives/planners/, registered by name in registry.cc.
//
// Planners are pure: same inputs, same Plan; no I/O, threads or clocks. Every Plan they return
// passes ValidatePlan(). Thread-safe: MakePlan is const and keeps no state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct PlanOptions {
  // Where the broadcast starts: a node index of the model; -1 means the model's source.
  int source = -1;

  // The nodes that take part (node indices of the model); empty means every node. The source
  // takes part whether listed or not. Order does not matter: planners order members themselves.
  std::vector<int> members;

  // Chunk size: the unit of pipelining, hashing and retransmission. Smaller chunks fill the
  // pipeline sooner (less latency per hop); larger ones cost less per-chunk overhead.
  uint64_t chunk_bytes = 1 << 20;

  // Default parallel TCP streams per edge. More streams fill long fat pipes (one stream gets
  // ~4% of a 1 Gbit/s link at 20 ms, [ML] 1.7) at the cost of more sockets.
  int streams = 1;

  // All-to-all planners only: where each member's part lies in the payload, by node index of
  // the model (step-1 ranges; a node without a part has an empty range), together covering
  // every chunk once. Lane i then carries member i's part, and members without one source no
  // lane. Empty: the payload is split evenly, rank by rank (planner_util.h AllToAllPlan).
  std::vector<ChunkRange> parts;

  // For randomised planners; the same seed gives the same plan.
  uint32_t seed = 0;

  // Only `auto` reads these; every other planner uses chunk_bytes and streams as given.
  // When true, auto searches the chunk size (chunk_bytes is then only its first guess); when
  // false it keeps chunk_bytes, so a size the user asked for is respected. Callers set it when
  // the user left the chunk size unspecified.
  bool choose_chunk_bytes = false;
  // The smallest chunk auto may choose: callers set SmallestChunkBytes (validate_plan.h) for
  // the payload and the mode, so no plan exceeds the chunk count a member can hold.
  uint64_t min_chunk_bytes = 1;
  // When true, auto also tries more parallel streams (2 and 4) on networks with switch uplinks;
  // when false it keeps `streams`.
  bool choose_streams = false;
};

class Planner {
 public:
  virtual ~Planner() = default;

  // The registered name including parameters, e.g. "knomial:4".
  virtual std::string name() const = 0;

  // The chunk size for `payload_bytes` when the caller names none (callers then set
  // PlanOptions::chunk_bytes to it). For push plans about 2048 chunks, a power of two from
  // 64 KiB to 4 MiB: what a chunk costs in pipeline fill and in lag between parent and child
  // (up to a window of chunks per hop, which a member whose upload is fully used never wins
  // back) is then a fixed share of the broadcast, while the per-chunk work stays small. On
  // netgrid flat16 (100mbit, 256 MiB, multilane) 128 KiB chunks finished at 1.065-1.11x the
  // bound, 256 KiB at 1.10-1.12x, 1 MiB at 1.18-1.19x (docs/performance.md).
  virtual uint64_t DefaultChunkBytes(uint64_t payload_bytes) const;

  // InvalidArgument for inputs the planner cannot serve (unknown source, empty members...).
  virtual Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                const PlanOptions& options) const = 0;
};

// The power of two that cuts `payload_bytes` into at most about `chunks` chunks, clamped to
// [min_bytes, max_bytes] (both powers of two).
uint64_t ChunkBytesForCount(uint64_t payload_bytes, uint64_t chunks, uint64_t min_bytes, uint64_t max_bytes);

}  // namespace gridcast
