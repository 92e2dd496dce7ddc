// Conversion between the Plan of collectives/ and its wire form (proto/plan.proto).
//
// PlanFromProto is an input boundary: it bounds every count before allocating and runs
// ValidatePlan, so a malformed or hostile Plan from the network becomes InvalidArgument.
#pragma once

#include "collectives/plan.h"
#include "common/result.h"
#include "proto/plan.pb.h"

namespace gridcast {

// Limits on plans received from the network. A Plan beyond them is refused, not truncated.
inline constexpr uint64_t kMaxPlanChunks = uint64_t{1} << 24;
inline constexpr size_t kMaxPlanMembers = 100000;
inline constexpr size_t kMaxPlanLanes = 4096;

void PlanToProto(const Plan& plan, v1::Plan* out);

Result<Plan> PlanFromProto(const v1::Plan& in);

}  // namespace gridcast
