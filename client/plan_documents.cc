#include "client/plan_documents.h"

#include <algorithm>
#include <map>

#include "collectives/registry.h"
#include "collectives/simulator/simulator.h"
#include "collectives/topology.h"
#include "collectives/validate_plan.h"
#include "common/file_io.h"

namespace gridcast {

Result<NetworkModel> LoadTopology(const std::filesystem::path& path) {
  GRIDCAST_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path.string()));
  Result<NetworkModel> model = ParseTopology(text);
  if (!model.ok()) return model.status().WithContext(path.string());
  return model;
}

Result<PlanInputs> LoadPlanInputs(const std::filesystem::path& topology, uint64_t payload_bytes,
                                  uint64_t chunk_bytes, const std::string& source) {
  PlanInputs in;
  GRIDCAST_ASSIGN_OR_RETURN(in.net, LoadTopology(topology));
  in.payload_bytes = payload_bytes;
  if (chunk_bytes > 0) {
    GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(chunk_bytes).WithContext("--chunk"));
    in.options.chunk_bytes = chunk_bytes;
  } else {
    // Only auto reads these: without a chunk size it searches chunk size and streams.
    in.options.choose_chunk_bytes = true;
    in.options.choose_streams = true;
  }
  if (!source.empty()) {
    std::optional<int> node = in.net.FindNode(source);
    if (!node) return Status::InvalidArgument("--source: unknown node '" + source + "'");
    in.options.source = *node;
  }
  return in;
}

Result<Plan> MakePlanFromInputs(const Planner& planner, const PlanInputs& in) {
  PlanOptions options = in.options;
  // `plan` and `simulate` make push plans but for the swarm planners, whose default is sized
  // for their pieces.
  options.min_chunk_bytes = SmallestChunkBytes(in.payload_bytes, /*swarm=*/false);
  if (options.choose_chunk_bytes) {
    options.chunk_bytes = std::max(planner.DefaultChunkBytes(in.payload_bytes), options.min_chunk_bytes);
  } else {
    GRIDCAST_RETURN_IF_ERROR(CheckChunkCount(in.payload_bytes, options.chunk_bytes, /*swarm=*/false));
  }
  return planner.MakePlan(in.net, in.payload_bytes, options);
}

std::vector<const Fanout*> FanoutsInSendOrder(const Lane& lane) {
  std::map<int, const Fanout*> by_parent;
  for (const Fanout& f : lane.fanouts) by_parent[f.parent] = &f;
  std::vector<const Fanout*> order;
  std::vector<int> frontier = {lane.source};
  for (size_t i = 0; i < frontier.size(); ++i) {
    auto it = by_parent.find(frontier[i]);
    if (it == by_parent.end()) continue;
    order.push_back(it->second);
    frontier.insert(frontier.end(), it->second->children.begin(), it->second->children.end());
  }
  return order;
}

namespace {

nlohmann::json RangesJson(const std::vector<ChunkRange>& ranges) {
  nlohmann::json out = nlohmann::json::array();
  for (const ChunkRange& r : ranges) out.push_back({{"begin", r.begin}, {"end", r.end}, {"step", r.step}});
  return out;
}

Result<SimulatedPlan> PlanAndSimulate(const std::string& algo, const PlanInputs& in, double goodput, double bound_s) {
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(algo));
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, MakePlanFromInputs(*planner, in));
  // The daemon's per-chunk overhead, as auto assumes when it picks among these.
  SimOptions options;
  options.per_message_overhead_s = kDaemonPerChunkOverheadS;
  options.goodput_factor = goodput;
  GRIDCAST_ASSIGN_OR_RETURN(SimResult result, SimulatePlan(plan, in.net, options));
  const double efficiency = result.completion_s > 0 ? bound_s / result.completion_s : 1.0;
  return SimulatedPlan{plan.algorithm, plan.chunk_bytes, result.completion_s, efficiency, plan.rationale};
}

nlohmann::json SimulatedJson(const SimulatedPlan& row) {
  return {{"algo", row.algo}, {"chunk_bytes", row.chunk_bytes}, {"time_s", row.time_s}, {"efficiency", row.efficiency}};
}

}  // namespace

nlohmann::json PlanDocument(const Plan& plan) {
  nlohmann::json lanes = nlohmann::json::array();
  for (const Lane& lane : plan.lanes) {
    nlohmann::json edges = nlohmann::json::array();
    for (const Fanout* f : FanoutsInSendOrder(lane)) {
      nlohmann::json children = nlohmann::json::array();
      nlohmann::json streams = nlohmann::json::array();
      for (size_t c = 0; c < f->children.size(); ++c) {
        children.push_back(plan.members[f->children[c]]);
        streams.push_back(lane.StreamsOn(*f, c));
      }
      edges.push_back({{"parent", plan.members[f->parent]}, {"children", children}, {"streams", streams}});
    }
    lanes.push_back({{"source", plan.members[lane.source]}, {"chunks", RangesJson(lane.chunks)},
                     {"streams", lane.streams}, {"edges", edges}});
  }
  nlohmann::json out = {{"algorithm", plan.algorithm}, {"rationale", plan.rationale},
                        {"mode", PlanModeName(plan.mode)}, {"payload_bytes", plan.payload_bytes},
                        {"chunk_bytes", plan.chunk_bytes}, {"members", plan.members}, {"lanes", lanes},
                        {"shared_chunks", plan.shared_chunks}, {"window_chunks", plan.window_chunks}};
  if (plan.HasSwarm()) {
    nlohmann::json members = nlohmann::json::array();
    for (const SwarmMember& m : plan.swarm.members) {
      nlohmann::json peers = nlohmann::json::array();
      for (int peer : m.peers) peers.push_back(plan.members[peer]);
      members.push_back({{"member", plan.members[m.member]}, {"stripe", RangesJson(m.stripe)}, {"peers", peers}});
    }
    out["swarm"] = {{"source", plan.members[plan.swarm.source]}, {"free_choice", plan.swarm.free_choice},
                    {"members", members}};
  }
  return out;
}

Result<Simulation> SimulatePlanners(const PlanInputs& in, const std::string& algo, double goodput) {
  std::vector<std::string> algos;
  if (algo == "all") {
    for (const PlannerInfo& info : ListPlanners()) {
      if (info.kind == PlannerKind::kBroadcast && info.name != "auto") algos.push_back(info.name);
    }
  } else {
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(algo));
    algos.push_back(planner->name());
  }
  Simulation simulation;
  simulation.source = in.options.source < 0 ? in.net.source : in.options.source;
  simulation.bound = ComputeBroadcastBound(in.net, simulation.source, {}, in.payload_bytes);
  for (const std::string& name : algos) {
    Result<SimulatedPlan> row = PlanAndSimulate(name, in, goodput, simulation.bound.seconds);
    if (!row.ok()) return row.status().WithContext(name);
    // auto's row keeps the name asked for; its pick is in `chosen`.
    if (name == "auto") row->algo = name;
    simulation.rows.push_back(*row);
  }
  Result<SimulatedPlan> chosen = PlanAndSimulate("auto", in, goodput, simulation.bound.seconds);
  if (!chosen.ok()) return chosen.status().WithContext("auto");
  simulation.chosen = *chosen;
  return simulation;
}

nlohmann::json SimulationDocument(const Simulation& simulation) {
  nlohmann::json results = nlohmann::json::array();
  for (const SimulatedPlan& row : simulation.rows) results.push_back(SimulatedJson(row));
  return {{"bound_s", simulation.bound.seconds}, {"results", results}, {"auto", SimulatedJson(simulation.chosen)}};
}

}  // namespace gridcast
