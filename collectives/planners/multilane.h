// multilane: the multi-lane broadcast of [ML] for one site (algorithms.md §1.3).
//
// The payload is split into two lanes (chunks interleaved: lane A even, lane B odd). The other
// members form two heap-numbered binary trees, A_1.. and B_1..; the source streams lane A to
// A_1 and lane B to B_1, internal nodes forward their own lane to both children, and the leaves
// of each tree feed the other tree's nodes with their lane (the "swap"): leaf j of A sends lane A
// to B_{2j+1} and B_{2j+2}. Every member but the source then uploads at most two half-streams,
// one per NIC (or TCP connection), which gives log p·l + M/b: log latency and the chain's
// bandwidth term. For p = 4n-1 this is exactly the paper's shape; other p use the PROPOSAL of
// §1.3 (see AddMultiLaneSite). Pure; thread-safe.
#pragma once

#include <span>
#include <vector>

#include "collectives/planner.h"
#include "collectives/planners/planner_util.h"

namespace gridcast {

inline constexpr int kLaneA = 0;
inline constexpr int kLaneB = 1;

// An upload slot a multi-lane site leaves unused: where a WAN chain link can attach (§1.5).
struct FreeUplink {
  int member = 0;  // member index
  int lane = 0;    // the tree the member belongs to (kLaneA or kLaneB); it holds both lanes
  bool operator==(const FreeUplink&) const = default;
};

// Adds one site's trees to lane_a and lane_b. `nodes` are the site's members in tree order
// without the feeders: the first ceil(N/2) are A_1..A_{N_A}, the rest B_1..B_{N_B}. `feed_a`
// sends lane A to A_1 and `feed_b` lane B to B_1 (to A_1 when the site has a single node);
// `feed_streams` > 0 puts that many parallel streams on these two edges, 0 keeps the lane
// default. Returns the free uplinks of `nodes` (two upload slots each), tree A's first, in
// heap order; a member with two free slots is listed twice. For N = 4n-2 they are A_{2n-1}
// and B_{2n-1}. REQUIRES: nodes non-empty, feeders not in nodes.
//
// PROPOSAL rules (§1.3) for N not of the paper's form: N_A = ceil(N/2), N_B = floor(N/2); leaf
// j of A covers B_{2j+1}, B_{2j+2} and leaf j of B covers A_{2j+1}, A_{2j+2}, skipping indices
// that do not exist; when N is odd and N_B even, A_{N_A} is left out and B_{N_B/2}, which has a
// single child in B, serves it. N = 2 is the direct swap A_1 <-> B_1.
std::vector<FreeUplink> AddMultiLaneSite(std::span<const int> nodes, int feed_a, int feed_b,
                                         int feed_streams, Lane& lane_a, Lane& lane_b);

// A Plan over `ranks` with the two lanes of multi-lane (kLaneA: even chunks, kLaneB: odd
// chunks) and no edges yet; AddMultiLaneSite fills them.
Plan StartTwoLanePlan(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes,
                      const PlanOptions& options, std::string algorithm);

class MultiLanePlanner : public Planner {
 public:
  std::string name() const override { return "multilane"; }
  // Ignores the topology: all members form one site (use multilane-sites across sites).
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
