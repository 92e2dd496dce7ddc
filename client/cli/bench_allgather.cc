// gridcast bench --mode allgather and --mode mpi-allgather: every node contributes one part of
// SIZE / nodes bytes and ends with all parts; timed against AllgatherBoundSeconds.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "client/cli/bench_modes.h"
#include "client/cli/cli_util.h"
#include "collectives/bound.h"
#include "collectives/planners/all_to_all_auto.h"
#include "collectives/registry.h"
#include "collectives/simulator/simulator.h"
#include "common/hex.h"
#include "common/units.h"
#include "deploy/daemon_cpu_meter.h"
#include "deploy/mpi_launch.h"

namespace gridcast::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPartName = "bench-part.bin";
constexpr const char* kGatheredName = "bench-gathered";
constexpr const char* kMpiAllgatherTunedDefault = "ring";



// What the simulator predicts for the plan the coordinator made: the same planner, parts in
// node order (the order of the request), chunk size and coordinator (the first node).
Result<double> SimulatedSeconds(const BenchContext& ctx, const std::string& algorithm, uint64_t chunk_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(algorithm));
  PlanOptions options;
  options.source = 0;
  options.chunk_bytes = chunk_bytes;
  const uint64_t chunks_per_part = CeilDiv(AllgatherPartBytes(ctx), chunk_bytes);
  for (uint64_t v = 0; v < ctx.model.nodes.size(); ++v) {
    options.parts.push_back(ChunkRange{v * chunks_per_part, (v + 1) * chunks_per_part, 1});
  }
  const uint64_t bundle = chunks_per_part * ctx.model.nodes.size() * chunk_bytes;
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, planner->MakePlan(ctx.model, bundle, options));
  GRIDCAST_ASSIGN_OR_RETURN(SimResult sim, SimulatePlan(plan, ctx.model, DaemonPredictionOptions(plan.members.size())));
  return sim.completion_s;
}

}  // namespace

uint64_t AllgatherPartBytes(const BenchContext& ctx) {
  const uint64_t nodes = ctx.model.nodes.size();
  return CeilDiv(ctx.size_bytes, nodes);
}

uint64_t AllgatherReceivedBytes(const BenchContext& ctx) {
  return AllgatherPartBytes(ctx) * (ctx.model.nodes.size() - 1);
}

double AllgatherBoundOfBench(const BenchContext& ctx) {
  std::vector<int> nodes;
  for (size_t v = 0; v < ctx.model.nodes.size(); ++v) nodes.push_back(static_cast<int>(v));
  return AllgatherBoundSeconds(ctx.model, nodes, std::vector<uint64_t>(nodes.size(), AllgatherPartBytes(ctx)));
}

// Stays whole: the measurement in the order it runs (netgrid, parts, allgather, checks, CPU).
Result<BenchOutcome> RunAllgather(const BenchContext& ctx) {
  NetgridDaemonOptions daemons;
  daemons.gridcastd = ProgramBesideSelf("gridcastd");
  daemons.extra_args = ctx.args.daemon_args;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, daemons));
  std::vector<std::string> argv = {ProgramBesideSelf("gridcast"), "allgather", "--cluster", netgrid->cluster_file(),
                                   "--name", kGatheredName, "--algo", ctx.args.algo.empty() ? "auto" : ctx.args.algo,
                                   "--json"};
  std::map<std::string, Digest> parts;
  for (const Node& node : ctx.model.nodes) {
    GRIDCAST_ASSIGN_OR_RETURN(parts[node.name],
                              WriteRandomPayload(ctx.state_dir / "data" / node.name / kPartName, AllgatherPartBytes(ctx)));
    argv.insert(argv.end(), {"--part", node.name + "=" + kPartName});
  }
  if (!ctx.args.chunk.empty()) argv.insert(argv.end(), {"--chunk", ctx.args.chunk});
  if (ctx.args.in_memory) argv.push_back("--in-memory");
  if (!ctx.args.digest.empty()) argv.insert(argv.end(), {"--digest", ctx.args.digest});
  // Every node receives: all their CPU, over the command (the parts are written already).
  std::unique_ptr<DaemonCpuMeter> cpu_meter = DaemonCpuMeter::Start(netgrid->state(), NodeNames(ctx.model));
  const auto requested = std::chrono::system_clock::now();
  const auto began = std::chrono::steady_clock::now();
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv));
  const double command_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  const Result<std::map<std::string, double>> cpu_s = cpu_meter->Stop();
  std::ofstream(ctx.state_dir / "allgather.log") << out.output;
  GRIDCAST_ASSIGN_OR_RETURN(nlohmann::json summary, ParseSendJson(out));

  BenchOutcome outcome;
  outcome.bound_s = AllgatherBoundOfBench(ctx);
  outcome.part_bytes = AllgatherPartBytes(ctx);
  std::map<std::string, uint64_t> offsets;
  try {
    outcome.algo = summary.at("algorithm").get<std::string>();
    outcome.completion_s = summary.at("completion_s").get<double>();
    const double transfer_s = summary.value("transfer_s", outcome.completion_s);
    outcome.transfer_s = transfer_s;
    outcome.verified = summary.at("verified").get<bool>() && out.exit_code == 0;
    if (summary.contains("control")) outcome.control = summary["control"];
    if (summary.contains("digest")) outcome.digest = summary["digest"].get<std::string>();
    if (summary.contains("error")) outcome.details.push_back("allgather error: " + summary["error"].get<std::string>());
    const uint64_t chunk_bytes = summary.at("chunk_bytes").get<uint64_t>();
    outcome.details.push_back(fmt::format("{} parts of {}, chunks of {}, {} lanes", ctx.model.nodes.size(),
                                          FormatSize(AllgatherPartBytes(ctx)), FormatSize(chunk_bytes),
                                          summary.at("lanes").get<uint32_t>()));
    if (summary.contains("rationale")) outcome.details.push_back("why: " + summary["rationale"].get<std::string>());
    // completion_s starts at the request, as a broadcast's does; the command also describes
    // the parts before it.
    outcome.details.push_back(fmt::format("the command took {:.3f} s, describing, hashing and preparing included",
                                          command_s));
    for (const auto& part : summary.value("parts", nlohmann::json::array())) {
      offsets[part.at("member").get<std::string>()] = part.at("offset").get<uint64_t>();
    }
    if (outcome.verified) {
      Result<double> simulated = SimulatedSeconds(ctx, outcome.algo, chunk_bytes);
      if (!simulated.ok()) return simulated.status().WithContext("simulating " + outcome.algo);
      outcome.simulated_s = *simulated;
      outcome.details.push_back(fmt::format("simulated {:.3f} s: the transfer / simulated {:.3f}", *simulated,
                                            transfer_s / *simulated));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal(std::string("unexpected gridcast allgather summary: ") + e.what());
  }
  const auto first_byte = FirstByteAt(summary, requested);
  RecordNodeCpu(cpu_s, first_byte ? std::optional(cpu_meter->From(*first_byte)) : std::nullopt, NodeNames(ctx.model),
                AllgatherReceivedBytes(ctx), "gridcastd", &outcome);
  if (cpu_s.ok()) {
    RecordBusiestThreads(cpu_meter->BusiestThreads(), NodeNames(ctx.model), AllgatherReceivedBytes(ctx), &outcome);
  }
  // The daemons' digests agreed; check every gathered copy independently.
  int copies_ok = 0;
  for (const Node& node : ctx.model.nodes) {
    std::string bundle;
    if (ctx.args.in_memory) {
      GRIDCAST_ASSIGN_OR_RETURN(fs::path dir, MemoryDirOf(*netgrid, node.name));
      GRIDCAST_ASSIGN_OR_RETURN(bundle, ReadTextFile(dir / kGatheredName));
    }
    for (const auto& [member, digest] : parts) {
      Result<Digest> copy = Status::NotFound("no part of " + member + " in the bundle");
      if (!ctx.args.in_memory) {
        copy = FileSha256(ctx.state_dir / "data" / node.name / kGatheredName / member);
      } else if (offsets.count(member) != 0 && offsets[member] + AllgatherPartBytes(ctx) <= bundle.size()) {
        copy = Sha256(AsBytes(std::string_view(bundle).substr(offsets[member], AllgatherPartBytes(ctx))));
      }
      if (copy.ok() && *copy == digest) {
        ++copies_ok;
      } else {
        outcome.verified = false;
        outcome.details.push_back(node.name + ": the part of " + member + ": " +
                                  (copy.ok() ? "differs from what it contributed" : copy.status().message()));
      }
    }
  }
  outcome.details.push_back(fmt::format("{} of {} gathered parts hash to what their nodes contributed", copies_ok,
                                        parts.size() * ctx.model.nodes.size()));
  return outcome;
}

Result<BenchOutcome> RunMpiAllgather(const BenchContext& ctx) {
  const std::string program = ProgramBesideSelf(kMpiAllgatherProgram);
  if (program == kMpiAllgatherProgram) {
    return Status::FailedPrecondition(
        "--mode mpi-allgather needs the MPI benchmark program, which is built only when CMake finds MPI "
        "(install Open MPI, e.g. libopenmpi-dev, and rebuild)");
  }
  MpiCollectiveOptions options;
  options.collective = MpiCollective::kAllgather;
  options.program = program;
  options.size_bytes = ctx.size_bytes;
  options.tuned_algorithm = ctx.args.algo.empty() ? kMpiAllgatherTunedDefault : ctx.args.algo;
  const std::vector<std::string>& known = OpenMpiAlgorithms(MpiCollective::kAllgather);
  if (std::find(known.begin(), known.end(), options.tuned_algorithm) == known.end()) {
    return Status::InvalidArgument("--algo for --mode mpi-allgather is an Open MPI allgather algorithm: " +
                                   fmt::format("{}", fmt::join(known, ", ")));
  }
  options.timeout_s = 120 + 20 * AllgatherBoundOfBench(ctx);
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, std::nullopt));
  const std::string& first = ctx.model.nodes[0].name;
  GRIDCAST_ASSIGN_OR_RETURN(MpiCollectiveResult result,
                            RunMpiCollective(netgrid->state(), first, ctx.state_dir / "mpi", options));
  BenchOutcome outcome;
  outcome.bound_s = AllgatherBoundOfBench(ctx);
  outcome.part_bytes = AllgatherPartBytes(ctx);
  outcome.algo = "ompi-" + options.tuned_algorithm;
  outcome.completion_s = result.completion_s;
  outcome.verified = result.verified && result.ranks == static_cast<int>(ctx.model.nodes.size());
  outcome.details.push_back(fmt::format("{} ranks, one per node; every part {}", result.ranks,
                                        result.verified ? "arrived intact everywhere" : "DID NOT arrive intact"));
  RecordMpiRankCpu(result, MpiNodeOrder(netgrid->state(), first), NodeNames(ctx.model), AllgatherReceivedBytes(ctx),
                   &outcome);
  return outcome;
}

}  // namespace gridcast::cli
