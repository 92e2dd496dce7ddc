// Plan slices: the plan as one member's control subtree needs it (docs/scale.md, "Sliced
// plans").
//
// Through the control tree (daemon/coordinator/control_tree.h) a member learns only what it
// and the members below it deal with: the payload's identity with its chunk hashes, every
// lane's chunk ranges, the fanouts in which a subtree member is the parent (whole) or a child
// (of a fanout whose parent is outside, only the subtree's children), the subtree's swarm
// entries, and the members all of those name plus the sources. A leaf's slice is its own
// parents, children and peers whatever the number of members; a relaying member's slice holds
// what it needs to slice again for each of its children. Indices stay the whole plan's, so a
// member's index, its data-plane handshakes and the control tree's arithmetic do not change.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/plan.pb.h"

namespace gridcast {

// `plan` (whole, or a slice that holds all of `subtree`) cut to what `subtree` needs.
// `subtree`: whole-plan member indices, each below WholeMemberCount(plan).
v1::Plan SlicePlan(const v1::Plan& plan, const std::vector<int>& subtree);

// `slice` (SlicePlan(plan, subtree), or the whole plan) with `patch` applied, as `subtree`
// needs it: for any plan, SlicePlan(ApplyPatch(plan, patch), subtree) and
// ApplyPatchToSlice(SlicePlan(plan, subtree), patch, subtree) hold the same lanes (fanouts in
// any order) and members. The patch's member entries name the members a slice lacked.
// Moves outside the slice's knowledge are skipped: ValidatePatch checks a patch, not this.
void ApplyPatchToSlice(v1::Plan* slice, const v1::PlanPatch& patch, const std::vector<int>& subtree);

// The number of members of the whole plan.
uint32_t WholeMemberCount(const v1::Plan& plan);

// The whole-plan index of plan.members(entry).
uint32_t WholeIndexOf(const v1::Plan& plan, int entry);

// The entry of plan.members for whole-plan member `index`, or nullptr when the plan does not
// list it. A binary search: on a slice whose indices are not increasing (PlanPartFromProto
// refuses it) it may miss, never reads outside the list.
const v1::Member* FindMember(const v1::Plan& plan, uint32_t index);

}  // namespace gridcast
