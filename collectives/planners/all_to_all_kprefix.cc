#include "collectives/planners/all_to_all_kprefix.h"

#include <algorithm>

#include "collectives/planners/planner_util.h"

namespace gridcast {

Result<Plan> AllToAllKPrefixPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                              const PlanOptions& options) const {
  if ((block_ & (block_ - 1)) != 0) {
    return Status::InvalidArgument("kprefix needs a power of two, got k = " +
                                   std::to_string(block_));
  }
  const int k = block_;
  return AllToAllPlan(net, payload_bytes, options, name(), [k](int p, int root) {
    const int blocks = (p + k - 1) / k;
    const int position = root % k;
    Tree tree(p);
    int previous = -1;
    for (int t = 0; t < blocks; ++t) {
      const int base = (root / k + t) % blocks * k;
      const int size = std::min(k, p - base);
      const int carrier = base + position % size;
      if (previous >= 0) tree[previous].push_back(carrier);
      // Partners at XOR distance >= the power of two above `size` (<= k) fall outside the
      // block, so the loop stops there rather than at k, which may be huge.
      int span = 1;
      while (span < size) span *= 2;
      for (int j = 1; j < span; ++j) {
        const int partner = (carrier - base) ^ j;
        if (partner < size) tree[carrier].push_back(base + partner);
      }
      previous = carrier;
    }
    return tree;
  });
}

}  // namespace gridcast
