#include "collectives/planners/flat.h"

#include "collectives/planners/planner_util.h"

namespace gridcast {

Result<Plan> FlatPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                   const PlanOptions& options) const {
  return OneTreePlan(net, payload_bytes, options, name(), [](int p) {
    Tree tree(p);
    for (int r = 1; r < p; ++r) tree[0].push_back(r);
    return tree;
  });
}

}  // namespace gridcast
