// ring (all-to-all multicast): every member's message travels the ring of ranks. Lane i
// (member i's message, see AllToAllPlan) is the path i -> i+1 -> ... -> i-1 (mod p): in [A2A]
// §4.2 every node forwards what it just received to (p + 1) mod P, P-1 times, a cyclic shift by
// one that is congestion-free on a fat tree (Lemma 1).
// Cost: [A2A] equation 7, T = (P-1)(α + mβ) + L_ring.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllRingPlanner : public Planner {
 public:
  std::string name() const override { return "ring"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
