// One execution's state as a Status answer (and a poll of the control tree) gives it.
#pragma once

#include "daemon/executor/plan_execution.h"
#include "proto/control.pb.h"

namespace gridcast {

// With `observations`, a pull or hybrid member's receipts per peer.
void PlanStatusOf(const PlanExecution& plan, bool observations, v1::PlanStatus* out);

}  // namespace gridcast
