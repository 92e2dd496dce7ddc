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

// AddEdge with `streams` parallel TCP streams on this edge (the fanout's other edges keep the
// lane default). For long fat pipes, where one stream cannot fill the link ([ML] 1.7).
void AddEdge(Lane& lane, int parent, int child, int streams);

// A binomial tree over `members` (members[0] is the root): virtual rank r sends to r + 2^k for
// every 2^k below r's lowest set bit (every 2^k for the root), largest subtree first, so the
// root's first child heads half of the members.
void AddBinomialTree(Lane& lane, const std::vector<int>& members);

// For planners that read the switch tree: OK, or InvalidArgument when a switch's parent chain
// does not reach switches[0] (the root) or a node names no switch. ParseTopology guarantees
// this; models built in code may not.
Status CheckSwitchTree(const NetworkModel& net);

// One switch uplink crossed in one direction, with that direction's rate.
struct UplinkHop {
  int switch_index = 0;  // the switch whose uplink is crossed
  bool up = true;        // true: child -> parent (uplink_up_bps); false: parent -> child
  double rate_bps = kUnshaped;
  double latency_s = 0;
};

// The uplinks crossed from switch `from` to switch `to` along the switch tree, in order.
// Empty when from == to. REQUIRES: both are switch indices of `net`.
std::vector<UplinkHop> SwitchRoute(const NetworkModel& net, int from, int to);

}  // namespace gridcast
