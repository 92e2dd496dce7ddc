#include "collectives/planners/knomial.h"

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> KnomialPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                      const PlanOptions& options) const {
  return OneTreePlan(net, payload_bytes, options, name(),
                     [this](int p) { return KnomialTree(p, radix_); });
}

}  // namespace gridcast
