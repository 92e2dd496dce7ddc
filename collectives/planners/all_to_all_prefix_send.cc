#include "collectives/planners/all_to_all_prefix_send.h"

#include "collectives/planners/planner_util.h"

namespace gridcast {

Result<Plan> AllToAllPrefixSendPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                                 const PlanOptions& options) const {
  return AllToAllPlan(net, payload_bytes, options, name(), [](int p, int root) {
    int cube = 1;
    while (cube < p) cube *= 2;
    Tree tree(p);
    for (int step = 1; step < cube; ++step) {
      if ((root ^ step) < p) tree[root].push_back(root ^ step);
    }
    return tree;
  });
}

}  // namespace gridcast
