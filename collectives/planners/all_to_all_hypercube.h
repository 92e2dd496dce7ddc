// hypercube (all-to-all multicast): dimension exchange ([A2A] §3.2). Lane i is the tree member
// i's message follows (AddDimensionExchange): in stage s every member holding it passes it to
// its neighbour across dimension s, so lane i is the binomial tree over the hypercube dimensions
// rooted at i, each parent sending in stage order. Non-power-of-two p, as the paper's "extra
// nodes": with q the largest power of two <= p, member e >= q first hands its message to e - q
// (8 -> 0 in the paper's example), the exchange runs inside the q-cube, and finally every cube
// member c < p - q passes everything on to c + q.
// The Plan pipelines chunks, so the per-stage combining (2^(s-1)·m bytes in stage s) becomes
// each chunk taking its own path; the stages are not barriers.
// Cost: [A2A] equation 4, T = log P·α + (P-1)m(β + γ + C_cube), or with extra nodes equation 5,
// T = (log P + 1)α + 2(P-1)m(β + C_hcube).
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllHypercubePlanner : public Planner {
 public:
  std::string name() const override { return "hypercube"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
