// Shared steps of every planner: resolving members into ranks, starting a Plan, chunk sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/planner.h"
#include "common/result.h"

namespace gridcast {

// The members of a broadcast as ranks: rank 0 is the source, the others follow in model order.
// Plans made from it use the rank as the member index.
struct Ranks {
  std::vector<int> nodes;   // rank -> node index of the model
  int size() const { return static_cast<int>(nodes.size()); }
};

// Checks options against the model (source and members are node indices, chunk size > 0,
// streams >= 1) and orders the members.
Result<Ranks> ResolveRanks(const NetworkModel& net, const PlanOptions& options);

// A Plan with members, payload and mode filled in and no lanes.
Plan StartPlan(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes,
               const PlanOptions& options, std::string algorithm);

// Chunks [0, n) split into `lanes` interleaved sets: lane l carries l, l + lanes, ...
// Interleaving keeps every lane busy from the first chunk to the last.
ChunkRange InterleavedChunks(uint64_t num_chunks, int lanes, int lane);

// Appends child to parent's fanout in `lane`, creating the fanout on first use.
void AddEdge(Lane& lane, int parent, int child);

}  // namespace gridcast
