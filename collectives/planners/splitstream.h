// splitstream:k: k stripes down k interior-node-disjoint trees (SplitStream, Castro et al.,
// SOSP'03; [ML] related work, [SUR] 1.3 "multiple spanning trees").
//
// Lane t (t = 0..k-1) carries chunks t, t+k, t+2k, ... The N = p-1 receivers are dealt
// round-robin into k groups (rank r into group (r-1) mod k); in tree t only group t forwards.
// The source sends each stripe once, to the first member of its group, so it uploads one copy
// of the payload. Below that, tree t is a heap over [group t, then every other receiver in rank
// order] with fan-out f_t = max(k, ceil((N-1)/|group t|)), so every forwarder is in group t, the
// tree is about log_f N deep, and every other receiver is a leaf of it.
//
// Balance: a receiver forwards in one tree only, to at most f_t children, each carrying 1/k of
// the payload; that is about one copy of the payload (k children), as SplitStream aims for.
// f_t exceeds k only when N is not a multiple of k and the short groups cannot hold all of
// tree t's N-1 edges at fan-out k (e.g. k = 4, N = 7: the groups of one must serve 6 children).
// With fewer receivers than stripes (p-1 < k) the plan uses p-1 stripes, one rooted at each
// receiver; with p = 1 a single empty lane.
// Cost (Hockney): about log_k p·l + M/b plus the bandwidth lost to fan-outs above k.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class SplitStreamPlanner : public Planner {
 public:
  // REQUIRES: stripes >= 1 (the registry enforces it).
  explicit SplitStreamPlanner(int stripes) : stripes_(stripes) {}
  std::string name() const override { return "splitstream:" + std::to_string(stripes_); }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  int stripes_;
};

}  // namespace gridcast
