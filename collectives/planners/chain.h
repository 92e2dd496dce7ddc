// chain: the pipelined chain. One lane; rank r forwards every chunk to rank r+1.
// Cost (Hockney, [ML] 1.2): (p-1)·l + M/b — the best bandwidth term, latency linear in p.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class ChainPlanner : public Planner {
 public:
  std::string name() const override { return "chain"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
