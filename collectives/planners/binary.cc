#include "collectives/planners/binary.h"

#include <numeric>

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> BinaryPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                     const PlanOptions& options) const {
  return OneTreePlan(net, payload_bytes, options, name(), [](int p) {
    std::vector<int> ranks(p);
    std::iota(ranks.begin(), ranks.end(), 0);
    Tree tree(p);
    AddHeap(ranks, 2, tree);
    return tree;
  });
}

}  // namespace gridcast
