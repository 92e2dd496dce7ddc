#include "collectives/planners/all_to_all_kshift.h"

#include <algorithm>

#include "collectives/planners/planner_util.h"

namespace gridcast {

Result<Plan> AllToAllKShiftPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                             const PlanOptions& options) const {
  const int shift = shift_;
  return AllToAllPlan(net, payload_bytes, options, name(), [shift](int p, int root) {
    // Positions are relative to root, mod p.
    auto member = [p, root](int x) { return ((root + x) % p + p) % p; };
    const int k = std::min(shift, p);
    const int behind = k / 2;        // ceil((k-1)/2) nodes before the carrier
    const int ahead = (k - 1) / 2;   // floor((k-1)/2) nodes after it
    const int windows = p / k;
    Tree tree(p);
    auto add_window = [&](int carrier, int first, int last) {
      for (int x = first; x <= last; ++x) {
        if (x != carrier) tree[member(carrier)].push_back(member(x));
      }
    };
    for (int t = 0; t < windows; ++t) {
      if (t > 0) tree[member((t - 1) * k)].push_back(member(t * k));
      add_window(t * k, t * k - behind, t * k + ahead);
    }
    // The windows cover [-behind, windows·k - behind); the rest needs one more carrier.
    const int first_left = windows * k - behind;
    const int last_left = p - behind - 1;
    if (first_left <= last_left) {
      const int carrier = std::min(windows * k, last_left);
      tree[member((windows - 1) * k)].push_back(member(carrier));
      add_window(carrier, first_left, last_left);
    }
    return tree;
  });
}

}  // namespace gridcast
