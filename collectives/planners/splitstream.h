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
// f_t exceeds k only when N = a·k + b with b >= 2: a short group (a members) must then carry
// tree t's N-1 edges, more than a·k. ceil((N-1)/a) is the least possible maximum once the source
// sends one copy and interiors are disjoint; it is k+1 when a >= b-1 and worst for tiny groups
// (k = 4, N = 7: a group of one serves 6 children). Measured for p = 8..70: k <= 2 never exceeds
// k; k = 3 reaches 4 and k = 4 reaches 6 (at p = 8), k+1 from p = 9 on.
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
