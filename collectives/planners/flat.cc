#include "collectives/planners/flat.h"

#include "collectives/planners/planner_util.h"

namespace gridcast {

Result<Plan> FlatPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                   const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  Lane lane;
  lane.streams = options.streams;
  lane.chunks.push_back(InterleavedChunks(plan.NumChunks(), 1, 0));
  for (int r = 1; r < ranks.size(); ++r) AddEdge(lane, 0, r);
  plan.lanes.push_back(std::move(lane));
  return plan;
}

}  // namespace gridcast
