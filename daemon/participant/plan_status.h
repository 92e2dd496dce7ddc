// One plan's run as a Status answer (and a poll of the control tree) gives it.
#pragma once

#include "daemon/participant/plan_run.h"
#include "proto/control.pb.h"

namespace gridcast {

// With `observations`, a pull or hybrid member's receipts per peer.
void PlanStatusOf(const PlanRun& run, bool observations, v1::PlanStatus* out);

}  // namespace gridcast
