// kprefix:k (all-to-all multicast): kPrefix ([A2A] §4.4), a hybrid of prefix-send and ring.
// Members form blocks of k consecutive ranks (k a power of two). In each iteration a node
// prefix-sends the message it holds inside its block (phase j = 1..k-1: to p XOR j relative to
// the block, fixing the paper's off-by-one "0 <= i <= k-1") and then, in phase k, sends it to
// (p + k) mod P, the same position in the next block; P/k iterations pass every message round
// the ring of blocks. Lane i is therefore a ring of carriers i, i+k, i+2k, ... (one per block,
// P/k of them), each carrier sending to its k-1 prefix neighbours first and to the next carrier
// last.
// P not a multiple of k (the paper requires it; our extension): the last block is short
// (s < k members). Its carrier for position x is x if that member exists, else x mod s, and it
// prefix-sends over the positions below s only; every member is still reached once.
// Cost: [A2A] equation 9, T = (P-1)(α + mβ_em) + (P/k)mδ + L_kPrefix.
// Default k = 8, the value the paper uses in all its performance runs.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllKPrefixPlanner : public Planner {
 public:
  // REQUIRES: block >= 1 (the registry enforces it); MakePlan rejects non-powers of two.
  explicit AllToAllKPrefixPlanner(int block) : block_(block) {}
  std::string name() const override { return "kprefix:" + std::to_string(block_); }
  // InvalidArgument also when k is not a power of two (prefix partners need one).
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  int block_;
};

}  // namespace gridcast
