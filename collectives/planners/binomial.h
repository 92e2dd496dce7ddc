// binomial: the binomial tree, Gloo-style (gloo/broadcast.cc): rank 0 is the source and in round
// i every holder v < 2^i sends to v + 2^i. Each parent sends in round order, which puts its
// largest subtree first (rank 1's subtree is every odd rank). One lane carries every chunk.
// ceil(log2 p) one-port rounds; a rank's hop depth is its number of set bits.
// Cost (Hockney, [ML] 1.2 / [SUR] 1.2): ceil(log p)·(l + M/b) unpipelined; pipelined, the root
// shares its upload among ceil(log p) children, so large payloads cost about log p·M/b.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class BinomialPlanner : public Planner {
 public:
  std::string name() const override { return "binomial"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
