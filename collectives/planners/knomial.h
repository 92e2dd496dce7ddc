// knomial:k: the k-nomial tree, generalising binomial (knomial:2 is the same tree). In round i
// every holder v < k^i sends to v + j·k^i for j = 1..k-1 (see KnomialTree), so the tree is
// at most ceil(log_k p) hops deep and a parent at most (k-1)·ceil(log_k p) children wide. One lane.
//
// Default k = 4: it halves binomial's hop count (log4 p = log2 p / 2), which is what bounds a
// latency-bound (small) broadcast when a member's sends overlap as they do here, while the
// root's copies grow only from log2 p to 3·log4 p = 1.5·log2 p. Larger k keeps cutting hops
// but the root's upload, which bounds large payloads, grows like (k-1)/log2 k.
// Cost (Hockney): ceil(log_k p)·l + (k-1)·ceil(log_k p)·M/b in the worst case (root-bound).
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class KnomialPlanner : public Planner {
 public:
  // REQUIRES: radix >= 2 (the registry enforces it).
  explicit KnomialPlanner(int radix) : radix_(radix) {}
  std::string name() const override { return "knomial:" + std::to_string(radix_); }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  int radix_;
};

}  // namespace gridcast
