#include "collectives/planners/binomial.h"

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> BinomialPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                       const PlanOptions& options) const {
  return OneTreePlan(net, payload_bytes, options, name(),
                     [](int p) { return KnomialTree(p, 2); });
}

}  // namespace gridcast
