// PredictRepair: what a failure costs a plan that is patched around it (docs/repair.md, step
// 2's figure). The plan runs (chunk-level simulation) until the failure; the failed members
// then take no part, the others go on under the unpatched plan for the detection delay; then
// PatchPlan moves the failed members' children given what each member holds at that moment,
// and the patched plan runs to the end. Pure; thread-safe.
#pragma once

#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/plan_patch.h"
#include "collectives/simulator/simulator.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct RepairPrediction {
  double healthy_s = 0;     // the plan without a failure
  double completion_s = 0;  // the last surviving member's, from the plan's start
  PlanPatch patch;
};

// `failed` fail (gone) at `at_s` from the start, and the patch takes effect `detect_s` later.
// REQUIRES nothing of the inputs: InvalidArgument or FailedPrecondition (PatchPlan's, a failed
// lane source) for what cannot be predicted.
Result<RepairPrediction> PredictRepair(const Plan& plan, const NetworkModel& net, const SimOptions& options,
                                       const std::vector<int>& failed, double at_s, double detect_s);

}  // namespace gridcast
