#include "collectives/planners/scatter_allgather.h"

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> ScatterAllgatherPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                               const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  const int p = ranks.size();
  const int owners = LanesWithChunks(plan.NumChunks(), p);
  for (int owner = 0; owner < owners; ++owner) {
    Tree tree(p);
    const std::vector<int> scatter = KnomialPath(owner, 2);
    AddPath(scatter, tree);
    std::vector<bool> holds(p, false);
    for (int v : scatter) holds[v] = true;
    if (allgather_ == Allgather::kRing) {
      std::vector<int> ring = {owner};
      for (int step = 1; step < p; ++step) {
        const int v = (owner + step) % p;
        if (!holds[v]) ring.push_back(v);
      }
      AddPath(ring, tree);
    } else {
      AddDimensionExchange(owner, holds, tree);
    }
    plan.lanes.push_back(TreeLane(0, ContiguousChunks(plan.NumChunks(), p, owner),
                                  std::move(tree), options.streams));
  }
  return plan;
}

}  // namespace gridcast
