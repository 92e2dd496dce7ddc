// Conversion between the Plan of collectives/ and its wire form (proto/plan.proto).
//
// PlanFromProto and PlanPartFromProto are an input boundary: they bound every count before
// allocating and validate, so a malformed or hostile Plan from the network becomes
// InvalidArgument.
#pragma once

#include "collectives/plan.h"
#include "collectives/plan_patch.h"
#include "collectives/validate_plan.h"
#include "common/chunk_digest.h"
#include "include/gridcast/result.h"
#include "proto/plan.pb.h"

namespace gridcast {

// Limits on plans received from the network (and kMaxPlanChunks, validate_plan.h). A Plan
// beyond them is refused, not truncated.
inline constexpr size_t kMaxPlanMembers = 100000;
inline constexpr size_t kMaxPlanLanes = 4096;
inline constexpr uint32_t kMaxPlanWindowChunks = 1 << 16;
// A plan patched more often than this is refused (each patch answers a failure).
inline constexpr uint32_t kMaxPatchVersion = 1 << 20;

void PlanToProto(const Plan& plan, v1::Plan* out);

// A whole plan (not a slice), validated with ValidatePlan.
Result<Plan> PlanFromProto(const v1::Plan& in);

// A whole plan or a slice (proto/plan_slice.h) as `member` holds it: indexed as the whole plan,
// members the slice does not list left unnamed, validated with ValidatePlanPart.
Result<Plan> PlanPartFromProto(const v1::Plan& in, int member);

// A plan patch (collectives/plan_patch.h) and its wire form. PatchFromProto bounds what it
// reads by the plan's `members` and `lanes` (InvalidArgument beyond them); ValidatePatch says
// whether the moves fit the plan.
v1::RepairReason RepairReasonToProto(RepairReason reason);
// InvalidArgument for REPAIR_REASON_UNSPECIFIED and values this build does not know.
Result<RepairReason> RepairReasonFromProto(v1::RepairReason reason);
void PatchToProto(const PlanPatch& patch, v1::PlanPatch* out);
Result<PlanPatch> PatchFromProto(const v1::PlanPatch& in, size_t members, size_t lanes);

// Whether a plan off the wire has a swarm writing into the members' stores beside its lanes
// (Plan::HasSwarm of the plan it decodes to).
bool PlanHasSwarm(const v1::Plan& plan);

// The wire's mode; InvalidArgument for an unset or unknown one.
Result<PlanMode> PlanModeFromProto(int value);
v1::PlanMode PlanModeToProto(PlanMode mode);
// A chunk digest off the wire (a request's or a Payload's digest field): UNSPECIFIED is
// SHA-256; InvalidArgument for a value no digest has.
Result<ChunkDigest> ChunkDigestFromProto(int value);
v1::ChunkDigest ChunkDigestToProto(ChunkDigest digest);

}  // namespace gridcast
