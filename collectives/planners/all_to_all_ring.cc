#include "collectives/planners/all_to_all_ring.h"

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {

Result<Plan> AllToAllRingPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                           const PlanOptions& options) const {
  return AllToAllPlan(net, payload_bytes, options, name(), [](int p, int root) {
    std::vector<int> ring;
    for (int step = 0; step < p; ++step) ring.push_back((root + step) % p);
    Tree tree(p);
    AddPath(ring, tree);
    return tree;
  });
}

}  // namespace gridcast
