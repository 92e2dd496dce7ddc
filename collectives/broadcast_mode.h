// A broadcast's mode (push, pull or hybrid: PlanMode) and what it asks of the plan: the mode a
// request asked for, completed from what is known of the network, the planner that mode may use,
// a push plan made hybrid, and the checked plan of a mode. Pure: the coordinator passes what the daemon knows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/planner.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct BroadcastModeInputs {
  std::optional<PlanMode> requested;  // none: the request leaves the mode open
  std::string algorithm = "auto";     // the planner the request names
  bool network_described = false;     // a topology describes the network (the model is not a guess)
  uint64_t payload_bytes = 0;
  bool data_encrypted = false;  // the data plane runs TLS; BitTorrent, which gridcast does not encrypt, does not
  bool probe = false;           // random probe bytes (tomography), which may cross BitTorrent anyway
};

// The requested mode; left open, hybrid where `auto` plans a network nobody described (a member
// whose tree parent fails or lags still finishes by pull) and the data plane is not encrypted,
// else push. FailedPrecondition for pull or hybrid of a payload over an encrypted data plane;
// InvalidArgument for a planner of the other kind (a push planner for pull, a swarm planner
// for push or hybrid).
Result<PlanMode> ChooseBroadcastMode(const BroadcastModeInputs& inputs);

// The planner `mode` plans with when the request names `algorithm`: pull's `auto` is swarm.
std::string PlannerForMode(PlanMode mode, const std::string& algorithm);

// `push`, made by a push planner with `options`, made hybrid: a striped swarm over the same
// members repairs what the trees do not deliver (its chunks are its pieces: the members cut off
// from a lane all pull its missing chunks, and each leaves the source once per bandwidth group,
// always: SwarmSeeding::kCopyPerGroup). InvalidArgument for an empty payload.
Result<Plan> WithSwarmRepair(Plan push, const NetworkModel& net, uint64_t payload_bytes, PlanOptions options);

// The one way a coordinator makes the plan it runs: `planner`'s plan for `options`, made hybrid
// when `mode` is (WithSwarmRepair), and checked on `net` (ValidatePlanOn) before anyone sees it.
Result<Plan> MakeCheckedPlan(const Planner& planner, PlanMode mode, const NetworkModel& net, uint64_t payload_bytes,
                             const PlanOptions& options);

}  // namespace gridcast
