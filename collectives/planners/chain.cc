#include "collectives/planners/chain.h"

#include "collectives/planners/planner_util.h"

namespace gridcast {

Result<Plan> ChainPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                    const PlanOptions& options) const {
  return OneTreePlan(net, payload_bytes, options, name(), [](int p) {
    Tree tree(p);
    for (int r = 0; r + 1 < p; ++r) tree[r].push_back(r + 1);
    return tree;
  });
}

}  // namespace gridcast
