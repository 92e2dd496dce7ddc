// prefix-send (all-to-all multicast): every member sends its message to everyone itself, in
// prefix order ([A2A] §4.3): in step j = 1, 2, ... member i sends to i XOR j. Lane i is the star
// rooted at i with children i^1, i^2, i^3, ... in that order. For P a power of two every step is
// a permutation that is congestion-free on a fat tree (Lemma 5). For other P we keep the same
// order over the enclosing power of two and skip the partners >= P (holes): every member is
// still reached once, but the steps are no longer permutations.
// Cost: [A2A] equation 8, T = (P-1)(α + mβ_em) + mδ + L_Prefix (one NIC copy, P-1 sends).
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllPrefixSendPlanner : public Planner {
 public:
  std::string name() const override { return "prefix-send"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
