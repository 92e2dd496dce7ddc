#include "collectives/broadcast_mode.h"

#include <utility>

#include "collectives/planners/swarm.h"
#include "collectives/registry.h"
#include "collectives/validate_plan.h"

namespace gridcast {

Result<PlanMode> ChooseBroadcastMode(const BroadcastModeInputs& inputs) {
  const bool left_open_on_a_guess = !inputs.requested && inputs.algorithm == "auto" && !inputs.network_described &&
                                    inputs.payload_bytes > 0 && !inputs.data_encrypted;
  const PlanMode mode = inputs.requested ? *inputs.requested : left_open_on_a_guess ? PlanMode::kHybrid : PlanMode::kPush;
  if (inputs.data_encrypted && ModeHasSwarm(mode) && !inputs.probe) {
    return Status::FailedPrecondition(
        "pull and hybrid move the payload over BitTorrent, which gridcast does not encrypt, and this cluster runs "
        "TLS: send with --mode push");
  }
  const std::string algorithm = PlannerForMode(mode, inputs.algorithm);
  const PlannerInfo* info = FindPlanner(algorithm);
  if (info == nullptr) return mode;  // unknown names are MakePlanner's to report
  const bool swarm = info->kind == PlannerKind::kSwarm;
  if (!ModeHasLanes(mode) && !swarm) {
    return Status::InvalidArgument("'" + algorithm + "' is a push planner; pull uses swarm or swarm-free");
  }
  if (ModeHasLanes(mode) && swarm) {
    return Status::InvalidArgument("'" + algorithm + "' is a pull planner; use --mode pull");
  }
  return mode;
}

std::string PlannerForMode(PlanMode mode, const std::string& algorithm) {
  return !ModeHasLanes(mode) && algorithm == "auto" ? "swarm" : algorithm;
}

Result<Plan> WithSwarmRepair(Plan push, const NetworkModel& net, uint64_t payload_bytes, PlanOptions options) {
  if (payload_bytes == 0) return Status::InvalidArgument("hybrid needs a non-empty payload");
  options.chunk_bytes = push.chunk_bytes;
  // A copy per group, whatever the source's upload: repairs are what a group cut off from the
  // others (a partition) still gets from the source, and a chunk dealt to a member it cannot
  // reach would hold it until that member's connection ends.
  GRIDCAST_ASSIGN_OR_RETURN(Plan swarm, SwarmPlanner(/*free_choice=*/false, SwarmSeeding::kCopyPerGroup)
                                            .MakePlan(net, payload_bytes, options));
  if (swarm.members != push.members) return Status::Internal("push and swarm plans order members differently");
  push.mode = PlanMode::kHybrid;
  push.shared_chunks = false;  // the swarm repairs the chunks a lane lists
  push.swarm = std::move(swarm.swarm);
  push.rationale += "; hybrid: the swarm repairs what the trees do not deliver";
  return push;
}

Result<Plan> MakeCheckedPlan(const Planner& planner, PlanMode mode, const NetworkModel& net, uint64_t payload_bytes,
                             const PlanOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, planner.MakePlan(net, payload_bytes, options));
  switch (mode) {
    case PlanMode::kPush:
    case PlanMode::kPull:
      break;  // the planner's plan is the mode's
    case PlanMode::kHybrid: {
      GRIDCAST_ASSIGN_OR_RETURN(plan, WithSwarmRepair(std::move(plan), net, payload_bytes, options));
      break;
    }
  }
  GRIDCAST_RETURN_IF_ERROR(ValidatePlanOn(plan, net));
  return plan;
}

}  // namespace gridcast
