// Plan patches (docs/repair.md): how a running plan routes around members that failed (gone
// or silent) or run far below their planned rate (slow) without being made again. A patch is
// a list of edge moves: in one lane, one child leaves its old parent for a new one, and its
// subtree comes with it. The children of failed and slow members move; failed members stay
// in the plan as leaves (every lane still reaches every member, so ValidatePlan holds), and
// slow ones keep receiving but gain no child (and themselves move to a member with more
// upload to spare than their parent, where there is one). Pure functions; thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "include/gridcast/result.h"

namespace gridcast {

enum class RepairReason { kGone, kSilent, kSlow };
// "gone", "silent", "slow", as the summary and --json name them.
const char* RepairReasonName(RepairReason reason);

struct Failure {
  int member = 0;
  RepairReason reason = RepairReason::kGone;
  double measured_bps = 0;  // slow: the rate it was seen to deliver at
  double expected_bps = 0;  // ... and the rate it was measured against
  bool operator==(const Failure&) const = default;
};

struct EdgeMove {
  int lane = 0;
  int child = 0;
  int old_parent = 0;
  int new_parent = 0;
  int streams = 0;  // on the new edge; 0: the lane's default
  bool operator==(const EdgeMove&) const = default;
};

struct PlanPatch {
  int version = 0;                // 1 for the first patch of a plan, then 2, ...
  std::vector<Failure> failures;  // what this patch answers
  std::vector<EdgeMove> moves;    // applied in order
  bool operator==(const PlanPatch&) const = default;
};

struct RepairInputs {
  const NetworkModel* net = nullptr;
  std::vector<int> member_nodes;  // plan member index -> node index of *net
  // Every member failed or slow so far (earlier patches' included): none of them gains a child.
  std::vector<Failure> failures;
  // [member][lane]: how much of the lane's log the member holds, as a prefix; empty: nothing
  // known (every member counts as level). Members ahead of an orphan are preferred as parents.
  std::vector<std::vector<uint64_t>> lane_held;
  // The plan's predicted transfer time: lane l's rate is LaneBytes(l) * 8 / predicted_s.
  double predicted_s = 0;
  int version = 1;  // the patch's: the plan's patch_version + 1
};

// The generic repair: each child of a failed or slow member, in each lane, moves to a live
// member outside its own subtree of the lane: first one with room for the lane (upload to
// spare after taking the lane's rate, on its NIC and every switch uplink on the way, against
// what the plan already puts there: a parent without it slows every child it feeds to the end,
// while one behind the child catches up), then one at least as far along the lane as the
// child, then the one with the most to spare; ties go to the child's switch, then fewer
// children in the lane, then the lower index, so the same inputs give the same patch. An edge
// into a gone or silent member loads nothing (a slow one still receives). Live orphans are
// placed largest subtree first; gone or silent ones (a dead member below a dead one) cost
// nothing and go last. Then each slow member, in each lane, moves to the member chosen the
// same way if that one has more to spare than its parent (its parent's upload may be what the
// plan needs most: the source's, say). Push plans of fixed lanes only: FailedPrecondition for
// a failed lane source, shared-chunk lanes or a plan without lanes; InvalidArgument for inputs
// that do not fit the plan.
Result<PlanPatch> PatchPlan(const Plan& plan, const RepairInputs& inputs);

// OK when the patch is the one after the plan's last (version plan.patch_version + 1), every
// move names a lane and members of the plan, takes the child from its parent at
// that point (moves apply in order), gives it a parent that is neither failed nor slow (in
// patch.failures or `earlier`) nor itself, and when afterwards no failed member has a child.
Status ValidatePatch(const Plan& plan, const PlanPatch& patch, const std::vector<Failure>& earlier = {});

// `plan` with the patch's moves made and its patch_version the patch's, checked (ValidatePatch,
// then ValidatePlan: a move into the child's own subtree leaves members unreached).
Result<Plan> ApplyPatch(Plan plan, const PlanPatch& patch, const std::vector<Failure>& earlier = {});

}  // namespace gridcast
