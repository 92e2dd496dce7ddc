#include "collectives/planners/splitstream.h"

#include <algorithm>

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> SplitStreamPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                          const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  const int p = ranks.size();
  const int receivers = p - 1;
  const int lanes = std::max(1, std::min(stripes_, receivers));
  for (int t = 0; t < lanes; ++t) {
    // Group t first (the forwarders), then everybody else as leaves.
    std::vector<int> order;
    for (int r = 1 + t; r < p; r += lanes) order.push_back(r);
    const int group = static_cast<int>(order.size());
    for (int r = 1; r < p; ++r) {
      if ((r - 1) % lanes != t) order.push_back(r);
    }
    Tree tree(p);
    if (!order.empty()) {
      tree[0].push_back(order[0]);
      const int fanout = std::max(stripes_, (receivers - 1 + group - 1) / group);
      AddHeap(order, fanout, tree);
    }
    plan.lanes.push_back(TreeLane(0, InterleavedChunks(plan.NumChunks(), lanes, t),
                                  std::move(tree), options.streams));
  }
  return plan;
}

}  // namespace gridcast
