// kshift:k (all-to-all multicast): kShift ([A2A] §4.5). Node p sends what it holds to the k
// nodes {p - ceil((k-1)/2), ..., p-1, p+1, ..., p + floor((k-1)/2), p+k} (mod P), in that order;
// the message it got from p-k is passed on the same way, P/k times. Our reading: the message
// from q is carried by q, q+k, q+2k, ..., and carrier q+tk covers the window of k consecutive
// nodes [q+tk - ceil((k-1)/2), q+tk + floor((k-1)/2)]; consecutive windows tile the ring, so
// every node receives each message once. Lane i is that ring of carriers, each sending to its
// window first and to the next carrier last. kshift:1 is the ring.
// P not a multiple of k (the paper allows it, with contention in some phases; the schedule is
// ours): after floor(P/k) full windows the r = P mod k uncovered nodes get a last carrier, the
// uncovered node nearest to where the next carrier would be, which sends to the other r-1.
// k > P behaves as k = P (one window holds everyone).
// Cost: [A2A] equation 10, T = (P-1)(α + mβ_em) + (P/k)mδ + L_kShift.
// Default k = 8, the paper's choice (congestion-free for k in {1,2,3,4,8} when k divides P).
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllKShiftPlanner : public Planner {
 public:
  // REQUIRES: shift >= 1 (the registry enforces it).
  explicit AllToAllKShiftPlanner(int shift) : shift_(shift) {}
  std::string name() const override { return "kshift:" + std::to_string(shift_); }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  int shift_;
};

}  // namespace gridcast
