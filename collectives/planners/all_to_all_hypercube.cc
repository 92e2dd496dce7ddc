#include "collectives/planners/all_to_all_hypercube.h"

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> AllToAllHypercubePlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                                const PlanOptions& options) const {
  return AllToAllPlan(net, payload_bytes, options, name(), [](int p, int root) {
    Tree tree(p);
    std::vector<bool> holds(p, false);
    holds[root] = true;
    AddDimensionExchange(root, holds, tree);
    return tree;
  });
}

}  // namespace gridcast
