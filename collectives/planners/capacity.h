// capacity: our multi-tree packing for heterogeneous node and link capacities (issue 3).
//
// The payload is striped over k lanes of equal rate r (interleaved chunks). A member v can
// serve floor(up(v) / r) children summed over all lanes (its "slots"), so every edge gets at
// least r of its parent's upload; a member whose download cannot take the k lanes (down(v) <
// k·r) gets no slots and stays a leaf. Slots go to the members with the most left, one lane
// at a time in turn, so fast uploaders are interior in every lane and slow ones are leaves in
// most. Each lane's tree is then filled breadth-first, members with more children higher up.
//
// Sites (the members under one switch) are handled one by one in breadth-first order of the
// switch tree from the source. A site is fed by the nearest site already served (fewest
// uplinks, then the widest bottleneck): one of its members (its entry, the one with the most
// slots in that lane) receives each lane across the uplinks and forwards it inside the site,
// so each uplink carries each lane once. Each site gets its own r (the largest its members'
// slots can carry), so a slow site slows only itself and the sites behind it.
//
// k runs from 1 to kMaxLanes; the planner keeps the k with the smallest estimate of
//   payload / (k · slowest effective lane rate) + tree depth · chunk / (that lane rate),
// the smaller k on ties (fewer connections). On one switch with uplink-free nodes this is
// the fluid optimum of Kumar and Ross up to the rounding of slots, which more lanes make finer.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class CapacityPlanner : public Planner {
 public:
  static constexpr int kMaxLanes = 8;

  std::string name() const override { return "capacity"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
