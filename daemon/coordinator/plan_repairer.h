// PlanRepairer: the source's side of repair (docs/repair.md). The members below a failure
// judge it (ParentWatch) and report it in their status (lane_trouble); the follower hands every
// progress round's attention here. A member reported gone or silent by one of its children, or
// given up on as lost by the follower, fails: the plan's own planner (collectives/plan_patch.h,
// PatchPlan) moves its children, lane by lane, to live members with upload to spare, and the
// patch goes down the control tree (ControlTree::Patch) with every patch before it. A failed
// member stays in the plan as a leaf; it is never judged again. A member its children report
// slow (two of them where it has two or more in the lane) is a straggler, and keeps receiving
// as a leaf, only while it is also the member with the fewest chunks: a parent starved by one
// above it (which the source's own NIC can do to a lane whose first hop is long: TCP favours
// the short one) looks slow to its children as well, but is not behind the others. Nor is one
// that reports the lane in trouble itself, or got a new parent in it within kCatchingUp (it or
// a member above it in that lane: a subtree below a move lags the rest while it catches up). So a
// straggler whose download is slow is found, one slow only in its upload is not, and one
// straggler at a time. The slowest member's own reports count only when a parent is gone: a
// link shaped to a tenth makes TCP back off for seconds, and the member would call its parents
// silent. The repairs made so far are
// reported with the broadcast's progress (BroadcastProgress.repairs).
//
// Not repaired (logged once, the broadcast goes on as before: the swarm repairs a hybrid's
// lanes, and push waits): plans whose lanes share chunks, a failed lane source, plans without
// lanes (PatchPlan's FailedPrecondition).
// Thread-compatible: the follower's thread calls it.
#pragma once

#include <chrono>
#include <map>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/plan_patch.h"
#include "common/ids.h"
#include "daemon/coordinator/control_tree.h"
#include "proto/control.pb.h"

namespace gridcast {

class PlanRepairer {
 public:
  using Clock = std::chrono::steady_clock;

  // `plan` as the source made it, `entries` its members as the wire names them (addresses
  // included), `net` what it was made on, `member_nodes` each member's node in it; `started`
  // when the broadcast started (repairs' at_s count from it); `patch_budget` how long sending a
  // patch down the tree may take.
  PlanRepairer(ControlTree& tree, const PlanId& id, Plan plan, std::vector<v1::Member> entries, NetworkModel net,
               std::vector<int> member_nodes, Clock::time_point started, std::chrono::milliseconds patch_budget);

  // One progress round: `attention` is the members that need it (running ones with lane
  // trouble among them), `lost` the members the follower gave up on, `slowest` the receiving
  // member with the fewest chunks. Patches the plan around the failures it finds and sends the
  // patch down the tree.
  void OnRound(const std::vector<v1::MemberProgress>& attention, const std::set<std::string>& lost,
               const std::string& slowest, Clock::time_point now);

  // Every repair so far, for BroadcastProgress.repairs.
  const std::vector<v1::Repair>& repairs() const { return repairs_; }

 private:
  // Fails `failures` (none of them failed before): patches the plan and sends the patch.
  void Repair(const std::vector<Failure>& failures, Clock::time_point now);
  int MemberIndex(const std::string& name) const;
  // Whether `member` or a member above it in `lane` got a new parent there within
  // kCatchingUp: the whole subtree below a move is behind while the moved lane catches up, and
  // its members are not judged slow meanwhile.
  bool CatchingUp(int member, int lane, Clock::time_point now) const;

  ControlTree& tree_;
  const PlanId id_;
  Plan plan_;  // with every patch so far applied
  const std::vector<v1::Member> entries_;
  const NetworkModel net_;
  const std::vector<int> member_nodes_;
  const Clock::time_point started_;
  const std::chrono::milliseconds patch_budget_;
  double predicted_s_ = 0;  // the healthy plan's prediction, once a repair needed it
  std::vector<Failure> failures_;  // every member failed so far
  std::vector<v1::PlanPatch> patches_;
  std::vector<v1::Repair> repairs_;
  // When each (member, lane) last got a new parent: a lane moved away from a dead parent
  // catches up for a while, and the subtree below is not judged by how it brought it meanwhile.
  std::map<std::pair<int, int>, Clock::time_point> moved_at_;
  static constexpr std::chrono::seconds kCatchingUp{10};
  bool given_up_ = false;  // a patch could not be made: no further attempts
};

}  // namespace gridcast
