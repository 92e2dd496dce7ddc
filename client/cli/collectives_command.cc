#include "client/cli/collectives_command.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "client/cli/cli_util.h"
#include "client/plan_documents.h"
#include "collectives/bound.h"
#include "collectives/registry.h"
#include "collectives/repair_prediction.h"
#include "collectives/simulator/simulator.h"
#include "collectives/validate_plan.h"
#include "common/units.h"

namespace gridcast::cli {
namespace {

struct CollectivesArgs {
  std::string topology;
  std::string algo;
  std::string size;
  std::string chunk;
  std::string source;
  double goodput = 1.0;
  bool json = false;
  bool dot = false;
  std::vector<std::string> fail;  // simulate: NAME@FRACTION
  double detect_s = 1.5;
};

// What both commands need: the model, the payload and the planner options.
Result<PlanInputs> LoadInputs(const CollectivesArgs& args) {
  Result<uint64_t> size = ParseSizeBytes(args.size);
  if (!size.ok()) return size.status().WithContext("--size");
  uint64_t chunk_bytes = 0;
  if (!args.chunk.empty()) {
    Result<uint64_t> chunk = ParseSizeBytes(args.chunk);
    if (!chunk.ok()) return chunk.status().WithContext("--chunk");
    GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(*chunk).WithContext("--chunk"));
    chunk_bytes = *chunk;
  }
  return LoadPlanInputs(args.topology, *size, chunk_bytes, args.source);
}

std::string DescribeChunks(const Lane& lane) {
  std::string text;
  for (const ChunkRange& r : lane.chunks) {
    if (!text.empty()) text += ", ";
    text += r.Count() == 0 ? "none"
                           : fmt::format("{}..{}{}", r.begin, r.end - 1,
                                         r.step > 1 ? fmt::format(" step {}", r.step) : "");
  }
  return text;
}

void PrintPlanText(const Plan& plan) {
  fmt::print("plan: {}, {} in {} chunks of {}, {} members, {} lanes, {}\n", plan.algorithm,
             FormatSize(plan.payload_bytes), plan.NumChunks(), FormatSize(plan.chunk_bytes),
             plan.members.size(), plan.lanes.size(), PlanModeName(plan.mode));
  if (!plan.rationale.empty()) fmt::print("why: {}\n", plan.rationale);
  if (plan.shared_chunks) fmt::print("lanes share chunks: the source hands each to the lane that drains first\n");
  if (plan.window_chunks > 0) fmt::print("window: at most {} unacknowledged chunks per connection\n", plan.window_chunks);
  fmt::print("members:");
  for (size_t m = 0; m < plan.members.size(); ++m) fmt::print(" {}={}", m, plan.members[m]);
  fmt::print("\n");
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    const Lane& lane = plan.lanes[l];
    fmt::print("lane {}: from {}, {} chunks ({}), {} stream(s) per edge\n", l,
               plan.members[lane.source], lane.ChunkCount(), DescribeChunks(lane), lane.streams);
    for (const Fanout* f : FanoutsInSendOrder(lane)) {
      std::string children;
      for (size_t c = 0; c < f->children.size(); ++c) {
        children += (c ? ", " : "") + plan.members[f->children[c]];
        const int streams = lane.StreamsOn(*f, c);
        if (streams != lane.streams) children += fmt::format(" (x{} streams)", streams);
      }
      fmt::print("  {} -> {}\n", plan.members[f->parent], children);
    }
  }
  if (!plan.HasSwarm()) return;
  fmt::print("swarm: source {}{}\n", plan.members[plan.swarm.source],
             plan.swarm.free_choice ? ", free choice (no stripes)" : "");
  for (const SwarmMember& m : plan.swarm.members) {
    uint64_t stripe = 0;
    for (const ChunkRange& r : m.stripe) stripe += r.Count();
    std::string peers;
    for (int peer : m.peers) peers += (peers.empty() ? "" : ", ") + plan.members[peer];
    fmt::print("  {}: {} chunks from the source; peers {}\n", plan.members[m.member], stripe, peers);
  }
}

// Graphviz: one cluster per switch holding its members, one colour per lane.
void PrintPlanDot(const Plan& plan, const NetworkModel& net) {
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  fmt::print("digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box];\n", plan.algorithm);
  for (size_t s = 0; s < net.switches.size(); ++s) {
    std::string nodes;
    for (size_t m = 0; m < plan.members.size(); ++m) {
      if (net.nodes[*net.FindNode(plan.members[m])].switch_index == static_cast<int>(s)) {
        nodes += fmt::format("    \"{}\";\n", plan.members[m]);
      }
    }
    if (nodes.empty()) continue;
    fmt::print("  subgraph \"cluster_{}\" {{\n    label=\"{}\";\n{}  }}\n", net.switches[s].name,
               net.switches[s].name, nodes);
  }
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    const char* colour = kColours[l % std::size(kColours)];
    for (const Fanout* f : FanoutsInSendOrder(plan.lanes[l])) {
      for (size_t c = 0; c < f->children.size(); ++c) {
        fmt::print("  \"{}\" -> \"{}\" [color=\"{}\", label=\"{}.{}\"];\n",
                   plan.members[f->parent], plan.members[f->children[c]], colour, l, c + 1);
      }
    }
  }
  fmt::print("}}\n");
}

int RunPlan(const CollectivesArgs& args) {
  Result<PlanInputs> in = LoadInputs(args);
  if (!in.ok()) return ReportError(in.status());
  Result<std::unique_ptr<Planner>> planner = MakePlanner(args.algo);
  if (!planner.ok()) return ReportError(planner.status());
  Result<Plan> plan = MakePlanFromInputs(**planner, *in);
  if (!plan.ok()) return ReportError(plan.status());
  if (args.json) {
    fmt::print("{}\n", PlanDocument(*plan).dump(2));
  } else if (args.dot) {
    PrintPlanDot(*plan, in->net);
  } else {
    PrintPlanText(*plan);
  }
  return kExitOk;
}

// `gridcast simulate --fail`: one plan, members failed part-way and patched around
// (collectives/repair_prediction.h), against the bound of a broadcast to the survivors.
Status SimulateFailures(const CollectivesArgs& args, const PlanInputs& in) {
  if (args.algo == "all") return Status::InvalidArgument("--fail needs one planner (--algo)");
  std::vector<int> failed;
  std::optional<double> fraction;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(args.algo));
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, MakePlanFromInputs(*planner, in));
  for (const std::string& spec : args.fail) {
    const size_t at = spec.rfind('@');
    char* end = nullptr;
    const double f = at == std::string::npos ? -1 : std::strtod(spec.c_str() + at + 1, &end);
    if (at == std::string::npos || end == nullptr || *end != '\0' || !(f >= 0 && f <= 10)) {
      return Status::InvalidArgument("--fail takes NAME@FRACTION (of the bound, 0 to 10), not '" + spec + "'");
    }
    if (fraction && *fraction != f) return Status::InvalidArgument("--fail: every member fails at one time");
    fraction = f;
    const std::string name = spec.substr(0, at);
    const auto member = std::find(plan.members.begin(), plan.members.end(), name);
    if (member == plan.members.end()) return Status::InvalidArgument("--fail: '" + name + "' is no member of the plan");
    failed.push_back(static_cast<int>(member - plan.members.begin()));
  }
  std::vector<int> survivors;
  for (int m = 0; m < static_cast<int>(plan.members.size()); ++m) {
    if (std::find(failed.begin(), failed.end(), m) == failed.end()) survivors.push_back(*in.net.FindNode(plan.members[m]));
  }
  const int source = *in.net.FindNode(plan.members[0]);
  const double bound_s = BroadcastBoundSeconds(in.net, source, {}, in.payload_bytes);
  const double survivors_bound_s = BroadcastBoundSeconds(in.net, source, survivors, in.payload_bytes);
  SimOptions options;
  options.mode = SimMode::kChunkLevel;
  options.per_message_overhead_s = kDaemonPerChunkOverheadS;
  options.goodput_factor = args.goodput;
  GRIDCAST_ASSIGN_OR_RETURN(const RepairPrediction prediction,
                            PredictRepair(plan, in.net, options, failed, *fraction * bound_s, args.detect_s));
  std::vector<std::string> names;
  for (const int m : failed) names.push_back(plan.members[m]);
  if (args.json) {
    nlohmann::json edges = nlohmann::json::array();
    for (const EdgeMove& move : prediction.patch.moves) {
      edges.push_back({{"lane", move.lane},
                       {"child", plan.members[move.child]},
                       {"old_parent", plan.members[move.old_parent]},
                       {"new_parent", plan.members[move.new_parent]}});
    }
    fmt::print("{}\n", nlohmann::json{{"algo", plan.algorithm},
                                      {"failed", names},
                                      {"at_s", *fraction * bound_s},
                                      {"detect_s", args.detect_s},
                                      {"healthy_s", prediction.healthy_s},
                                      {"repaired_s", prediction.completion_s},
                                      {"bound_s", bound_s},
                                      {"survivors_bound_s", survivors_bound_s},
                                      {"survivors_ratio", prediction.completion_s / survivors_bound_s},
                                      {"moves", prediction.patch.moves.size()},
                                      {"patch", edges}}
                           .dump(2));
    return Status::Ok();
  }
  fmt::print("{} on {}: {} without a failure in {:.2f} s (bound {:.2f} s)\n", plan.algorithm,
             in.net.name, FormatSize(in.payload_bytes), prediction.healthy_s, bound_s);
  fmt::print("{} failed at {:.2f} s, patched {:.2f} s later ({} edge moves): the survivors in {:.2f} s, "
             "their bound {:.2f} s, ratio {:.3f}\n",
             fmt::join(names, ", "), *fraction * bound_s, args.detect_s, prediction.patch.moves.size(),
             prediction.completion_s, survivors_bound_s, prediction.completion_s / survivors_bound_s);
  return Status::Ok();
}

int RunSimulate(const CollectivesArgs& args) {
  Result<PlanInputs> in = LoadInputs(args);
  if (!in.ok()) return ReportError(in.status());
  if (!args.fail.empty()) {
    const Status simulated = SimulateFailures(args, *in);
    return simulated.ok() ? kExitOk : ReportError(simulated);
  }
  Result<Simulation> simulation = SimulatePlanners(*in, args.algo, args.goodput);
  if (!simulation.ok()) return ReportError(simulation.status());
  if (args.json) {
    fmt::print("{}\n", SimulationDocument(*simulation).dump(2));
    return kExitOk;
  }
  const BroadcastBound& bound = simulation->bound;
  const int source = simulation->source;
  const SimulatedPlan& chosen = simulation->chosen;
  fmt::print("{}: {} members, {} from {}\n", in->net.name.empty() ? args.topology : in->net.name,
             in->net.nodes.size(), FormatSize(in->payload_bytes), in->net.nodes[source].name);
  fmt::print("bound: {:.2f} s ({})\n", bound.seconds, DescribeBound(bound, in->net));
  fmt::print("{:<22} {:>8} {:>10} {:>10}\n", "ALGORITHM", "CHUNK", "TIME(s)", "EFFICIENCY");
  for (const SimulatedPlan& row : simulation->rows) {
    fmt::print("{:<22} {:>8} {:>10.2f} {:>10.3f}\n", row.algo, FormatSize(row.chunk_bytes),
               row.time_s, row.efficiency);
  }
  fmt::print("auto: {} {}, {:.2f} s, efficiency {:.3f} ({})\n", chosen.algo, FormatSize(chosen.chunk_bytes),
             chosen.time_s, chosen.efficiency, chosen.rationale);
  return kExitOk;
}

void AddCommonOptions(CLI::App* command, CollectivesArgs* args) {
  command->add_option("--topology", args->topology, "topology file (YAML)")->required();
  command->add_option("--size", args->size, "payload size, e.g. 1GiB")->required();
  command->add_option("--chunk", args->chunk, "chunk size, e.g. 1MiB (default: auto chooses, "
                                              "the others: their default for the size, 128KiB for 256MiB)");
}

}  // namespace

void AddCollectivesCommands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CollectivesArgs>();

  CLI::App* plan = app.add_subcommand("plan", "print a broadcast plan for a topology");
  AddCommonOptions(plan, args.get());
  plan->add_option("--algo", args->algo, "planner name (see `gridcast simulate --algo all`)")
      ->required();
  plan->add_option("--source", args->source, "source node (default: the topology's)");
  CLI::Option* json = plan->add_flag("--json", args->json, "print the plan as JSON");
  plan->add_flag("--dot", args->dot, "print the plan as Graphviz dot")->excludes(json);
  plan->callback([args, exit_code] { *exit_code = RunPlan(*args); });

  CLI::App* simulate =
      app.add_subcommand("simulate", "predict broadcast times and efficiency on a topology");
  AddCommonOptions(simulate, args.get());
  simulate->add_option("--algo", args->algo, "planner name, `all` or `auto`")->default_val("all");
  simulate->add_option("--goodput", args->goodput,
                       "fraction of every rate TCP carries as payload, as `gridcast bench --mode iperf` "
                       "measures it (netgrid: about 0.955); the bound stays the rates' own")
      ->default_val(1.0)
      ->check(CLI::Range(0.01, 1.0));
  simulate->add_flag("--json", args->json, "print the results as JSON");
  simulate->add_option("--fail", args->fail,
                       "NAME@FRACTION: the member fails (gone) that fraction of the bound in, and the plan is "
                       "patched around it (docs/repair.md); repeatable, one time for all; needs one --algo")
      ->type_name("NAME@FRACTION");
  simulate->add_option("--detect", args->detect_s, "with --fail: seconds from the failure to the patch")
      ->default_val(1.5)
      ->check(CLI::Range(0.0, 600.0));
  simulate->callback([args, exit_code] { *exit_code = RunSimulate(*args); });
}

}  // namespace gridcast::cli
