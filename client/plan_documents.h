// What `gridcast plan` and `gridcast simulate` compute, and the documents their --json prints:
// shared by the command and libgridcast (PlanJson, SimulateJson), so the two cannot differ.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectives/bound.h"
#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/planner.h"
#include "include/gridcast/result.h"

namespace gridcast {

// Reads and parses a topology file; errors start with "PATH:".
Result<NetworkModel> LoadTopology(const std::filesystem::path& path);

// The model, the payload and the planner options of a plan or a simulation.
struct PlanInputs {
  NetworkModel net;
  uint64_t payload_bytes = 0;
  PlanOptions options;
};

// `chunk_bytes` 0: the planner chooses (auto searches chunk size and streams); `source` empty:
// the topology's. Errors name the flag they come from (--chunk, --source), as the command's.
Result<PlanInputs> LoadPlanInputs(const std::filesystem::path& topology, uint64_t payload_bytes,
                                  uint64_t chunk_bytes, const std::string& source);

// The plan `planner` makes of the inputs; without a chunk size, the planner's default for the
// payload (as the daemon does).
Result<Plan> MakePlanFromInputs(const Planner& planner, const PlanInputs& in);

// Lane edges in send order: breadth-first from the lane's source, each parent's children in
// the order it sends to them.
std::vector<const Fanout*> FanoutsInSendOrder(const Lane& lane);

// `gridcast plan --json`.
nlohmann::json PlanDocument(const Plan& plan);

// One planner's plan, simulated.
struct SimulatedPlan {
  std::string algo;
  uint64_t chunk_bytes = 0;
  double time_s = 0;
  double efficiency = 0;  // bound / time
  std::string rationale;
};

// `gridcast simulate` without --fail: each planner asked ("all": every broadcast planner but
// auto) and auto's pick, against the physical bound.
struct Simulation {
  BroadcastBound bound;
  int source = 0;  // node index
  std::vector<SimulatedPlan> rows;
  SimulatedPlan chosen;  // auto's
};
// `goodput`: the fraction of every rate TCP carries as payload (1 = the rates themselves).
Result<Simulation> SimulatePlanners(const PlanInputs& in, const std::string& algo, double goodput);

// `gridcast simulate --json`.
nlohmann::json SimulationDocument(const Simulation& simulation);

}  // namespace gridcast
