// flat: the source sends every chunk to every other member itself (p-1 copies from one NIC).
// Cost (Hockney): (p-1)·M/b for large M; the baseline every tree must beat.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class FlatPlanner : public Planner {
 public:
  std::string name() const override { return "flat"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
