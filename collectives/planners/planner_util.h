// Shared steps of every planner: resolving members into ranks, starting a Plan, chunk sets,
// and turning trees into lanes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/planner.h"
#include "include/gridcast/result.h"

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

// Chunks [0, n) split into `parts` contiguous runs as evenly as possible: the first n % parts
// runs get one chunk more, so a run is empty when there are fewer chunks than parts.
ChunkRange ContiguousChunks(uint64_t num_chunks, int parts, int part);

// How many parts planners give a lane to: min(num_chunks, parts), the parts that own chunks
// (always a prefix 0, 1, ...), but at least 1 so that an empty payload still gets a lane. Lanes
// that carry nothing would still cost the executor a connection each.
int LanesWithChunks(uint64_t num_chunks, int parts);

// Appends child to parent's fanout in `lane`, creating the fanout on first use.
void AddEdge(Lane& lane, int parent, int child);

// A rooted tree over member indices: tree[v] lists v's children in send order. Planners build
// one of these per lane instead of calling AddEdge, which is linear in the lane's fanouts.
using Tree = std::vector<std::vector<int>>;

// A lane carrying `chunks` from `source` down `tree` (whose child lists are moved into fanouts).
Lane TreeLane(int source, ChunkRange chunks, Tree tree, int streams);

// Broadcast down a single tree: one lane with every chunk, rooted at rank 0.
// `shape(p)` returns the tree over ranks [0, p). Errors are ResolveRanks's.
Result<Plan> OneTreePlan(const NetworkModel& net, uint64_t payload_bytes,
                         const PlanOptions& options, std::string algorithm,
                         const std::function<Tree(int p)>& shape);

// All-to-all multicast: the payload is the concatenation of the members' messages, member i's
// message being ContiguousChunks(n, p, i) (members i >= n own no chunks when n < p), or where
// PlanOptions::parts puts it. Each message that has chunks gets a lane from its member i down
// `shape(p, i)`; with the even split lane index = member index. Errors are ResolveRanks's, and
// InvalidArgument for parts that do not cover the payload once or belong to non-members;
// PlanOptions::source only fixes which node is rank 0.
// (In the all-to-all planners' headers "[A2A] §x.y" is the paper's own numbering, seeds/003;
// algorithms.md §4 digests it.)
Result<Plan> AllToAllPlan(const NetworkModel& net, uint64_t payload_bytes,
                          const PlanOptions& options, std::string algorithm,
                          const std::function<Tree(int p, int root)>& shape);
// AddEdge with `streams` parallel TCP streams on this edge (the fanout's other edges keep the
// lane default). For long fat pipes, where one stream cannot fill the link ([ML] 1.7).
void AddEdge(Lane& lane, int parent, int child, int streams);

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
