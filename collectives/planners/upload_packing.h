// upload-packing: k equal-rate lanes that use every member's upload, for networks where the
// members' upload is what binds (issue 35).
//
// Where every copy must leave some member's uplink, the bound is the members' total upload,
// and two things waste it: a tree's leaves, which send nothing, and a site whose members upload
// less than they must receive, which cannot feed itself from one copy per lane. So:
//   1. The payload is striped over k interleaved lanes of one rate r. A member can serve
//      floor(up / r) children summed over the lanes (its slots); a receiver must download k·r.
//   2. Slots are routed to where children are by a max-flow over the switch tree
//      (collectives/max_flow.h): each site first takes one entry per lane from its feeder
//      (sites.h), then the children its own slots cannot serve from other sites' spare slots,
//      each such child costing r on every uplink of the way. A site with spare upload thus
//      serves part of a poorer site's members directly, in the same lanes.
//   3. r is the largest rate for which that flow serves every receiver in every lane
//      (bisection); for each k up to kMaxLanes, the planner keeps the k with the smallest
//      estimate of payload / (k·r) + depth · chunk / r, the smaller k on ties.
//   4. Each member's slots go to two lanes (all members' first halves fill the lanes' needs in
//      turn, then the second halves), so a lane has a few interior members with several
//      children each and stays shallow, while a member whose parent stalls in one lane keeps
//      its upload busy in the other (on the netgrid, slots all in one lane were 4% slower than
//      spread over three, where the simulator, which never stalls, has them 0-3% faster; two
//      keep the lanes shallow enough to be predicted fast). Each lane is filled breadth-first
//      from the source: members with children of their own first, its own site's before
//      others', sites not reached yet before the rest.
//   5. The lanes share chunks (Plan::shared_chunks): the source gives the next chunk to the
//      lane that drains first, so lanes that TCP runs slower than their rate carry less and all
//      end together; the plan's window (Plan::window_chunks) is a quarter second of a lane
//      (at least one chunk), so that few chunks are committed to a lane before it shows its
//      pace.
// Uplink-free networks of equal members are the fluid optimum of Kumar and Ross up to the
// rounding of slots, as for capacity; what this adds is imports across uplinks and shallow
// lanes. What it gives up: a member has a parent in every lane (k connections in) and about
// up / r children (connections out) in two to four lanes, and since a lane runs at r = R / k,
// its pipeline fill (depth · chunk / r) asks for small chunks when k is large.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class UploadPackingPlanner : public Planner {
 public:
  static constexpr int kMaxLanes = 16;

  // `lanes` fixes the lane count (1..kMaxLanes, at most the chunks); 0 chooses it (step 3).
  explicit UploadPackingPlanner(int lanes = 0) : lanes_(lanes) {}

  std::string name() const override { return "upload-packing"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  int lanes_;
};

}  // namespace gridcast
