// multilane-sites: multi-lane trees per site, chained across sites ([ML] 3.2, algorithms.md §1.5).
//
// A site is the set of members hung directly under one switch (PROPOSAL in §1.5: the paper's
// clusters; an edge switch of a big cluster is its own site, as [ML] 1.1 advises). The site of
// the source runs single-site multilane (AddMultiLaneSite); every other site builds its own
// trees A and B without a node 0, fed by two WAN streams: the previous site's last free uplink
// of tree A sends lane A to A_1, and likewise for B. When a site leaves both free uplinks in one
// tree (the REVIEW case of §1.3), the other lane's WAN stream leaves from that tree too: every
// node holds both halves, at the cost of one more hop for that lane.
//
// Site order (the paper is silent; PROPOSAL of §1.5): a greedy path from the source's site, each
// step to the unvisited site with the highest bottleneck rate from the current one (the slowest
// uplink, in the direction of travel, on the switch-tree route between the two switches); ties
// go to the lower switch index. Inter-site edges carry WanStreams() parallel TCP streams.
// With a single site the plan equals multilane's. Pure; thread-safe.
#pragma once

#include <vector>

#include "collectives/planner.h"

namespace gridcast {

class MultiLaneSitesPlanner : public Planner {
 public:
  // Parallel TCP streams on the WAN edge from a member under switch `from_switch` to the site
  // under `to_switch`: at least `requested`, and as many as their windows need to fill the
  // path's bandwidth-delay product (one stream fills a few percent of a long fat pipe, [ML]
  // 1.7). Not more: every stream takes a fair share of the sender's upload, so extra streams
  // on a short path would starve the sender's other child.
  static int WanStreams(const NetworkModel& net, int from_switch, int to_switch, int requested);
  // The receive window one stream reaches (Linux tcp_rmem autotuning, conservatively).
  static constexpr double kStreamWindowBytes = 4 << 20;
  static constexpr int kMaxWanStreams = 16;

  std::string name() const override { return "multilane-sites"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

  // The switches holding members, in chain order (first: the source's switch). `switch_of_rank`
  // gives each rank's switch; rank 0 is the source. Exposed for tests.
  static std::vector<int> SiteOrder(const NetworkModel& net,
                                    const std::vector<int>& switch_of_rank);
};

}  // namespace gridcast
