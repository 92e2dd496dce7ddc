#include "collectives/repair_prediction.h"

#include <algorithm>
#include <string>

namespace gridcast {

Result<RepairPrediction> PredictRepair(const Plan& plan, const NetworkModel& net, const SimOptions& options,
                                       const std::vector<int>& failed, double at_s, double detect_s) {
  if (!(at_s >= 0) || !(detect_s >= 0)) return Status::InvalidArgument("times must not be negative");
  RepairPrediction prediction;
  GRIDCAST_ASSIGN_OR_RETURN(const SimResult healthy, SimulateFrom(plan, net, options, SimStart{}));
  prediction.healthy_s = healthy.completion_s;
  RepairInputs inputs;
  inputs.net = &net;
  for (const std::string& name : plan.members) {
    const std::optional<int> node = net.FindNode(name);
    if (!node) return Status::InvalidArgument("member " + name + " is no node of the network");
    inputs.member_nodes.push_back(*node);
  }
  for (const int member : failed) inputs.failures.push_back({member, RepairReason::kGone});
  inputs.predicted_s = std::max(healthy.completion_s, 1e-9);
  for (const int member : failed) {
    if (member < 0 || static_cast<size_t>(member) >= plan.members.size()) {
      return Status::InvalidArgument("member " + std::to_string(member) + " is not in the plan");
    }
  }

  GRIDCAST_ASSIGN_OR_RETURN(SimStart state, SimulateUntil(plan, net, options, SimStart{}, at_s));
  state.absent.assign(plan.members.size(), false);
  for (const int member : failed) state.absent[member] = true;
  GRIDCAST_ASSIGN_OR_RETURN(state, SimulateUntil(plan, net, options, state, detect_s));
  inputs.lane_held = state.lane_held;
  GRIDCAST_ASSIGN_OR_RETURN(prediction.patch, PatchPlan(plan, inputs));
  GRIDCAST_ASSIGN_OR_RETURN(const Plan patched, ApplyPatch(plan, prediction.patch));
  GRIDCAST_ASSIGN_OR_RETURN(const SimResult rest, SimulateFrom(patched, net, options, state));
  // Members done before the patch keep the time they finished at.
  double last = 0;
  for (size_t m = 0; m < plan.members.size(); ++m) {
    if (state.absent[m]) continue;
    const double finished = rest.member_completion_s[m] > 0 ? at_s + detect_s + rest.member_completion_s[m]
                                                            : std::min(healthy.member_completion_s[m], at_s + detect_s);
    last = std::max(last, finished);
  }
  prediction.completion_s = last;
  return prediction;
}

}  // namespace gridcast
