// auto-alltoall: picks the all-to-all planner for a network by simulating each registered one
// (kprefix and kshift also at k = 2 and 4) on its model with the daemon's per-chunk overhead
// (DaemonPredictionOptions), at the caller's chunk size and stream count: an allgather's chunk
// size is fixed before planning, since each member hashes its part in chunks of it. The
// shortest prediction wins (ties: the candidate with the lower bound, then the one listed
// first); candidates whose lower bound (PlanLowerBoundSeconds) is above the best prediction so
// far are not simulated. The rationale names the winner with its efficiency against
// AllgatherBoundSeconds, the next two, and how many were ruled out. Pure; thread-safe.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllAutoPlanner : public Planner {
 public:
  std::string name() const override { return "auto-alltoall"; }
  // Errors: ResolveRanks's and AllToAllPlan's (parts that do not cover the payload).
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

// The bytes of each member's part in an all-to-all plan, by member index: its lane's chunks
// (the payload's last chunk may be short). Members sourcing no lane hold 0.
std::vector<uint64_t> PartBytesByMember(const Plan& plan);

}  // namespace gridcast
