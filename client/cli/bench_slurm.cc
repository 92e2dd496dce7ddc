// gridcast bench --mode sbcast | slurm-stage: a payload put on every node of a Slurm job, by
// Slurm's own sbcast and by `gridcast slurm stage`, on a real Slurm over the netgrid
// (deploy/slurm_netgrid.h). Both are timed inside the same kind of batch job, from the command's
// start to its end, and every node's copy is hashed again here.
#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "client/cli/bench_modes.h"
#include "client/cli/cli_util.h"
#include "collectives/bound.h"
#include "common/hex.h"
#include "common/units.h"
#include "deploy/daemon_cpu_meter.h"
#include "deploy/slurm_netgrid.h"

namespace gridcast::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTimeMarker = "gridcast-bench-seconds ";

struct TimedJob {
  double seconds = 0;
  int command_exit = -1;
  std::string output;  // the command's own, without the timing line
};

// Runs `command` (a shell line) as a batch job on every node, timed around the command alone
// on the job's first node, which must be the topology's source.
Result<TimedJob> RunTimedJob(const BenchContext& ctx, const NetgridState& netgrid, const std::string& command) {
  const std::string& source = ctx.model.nodes[ctx.model.source].name;
  const fs::path script = ctx.state_dir / "job.sh";
  const fs::path output = ctx.state_dir / "job.out";
  std::error_code ec;
  fs::remove(output, ec);  // never an earlier run's
  std::ofstream(script) << "#!/bin/sh\n"
                        << "if [ \"$SLURMD_NODENAME\" != " << ShellQuote(source) << " ]; then\n"
                        << "  echo \"the batch host is $SLURMD_NODENAME, not the source " << source << "\"; exit 3\n"
                        << "fi\n"
                        << "start=$(date +%s.%N)\n"
                        << command << "\n"
                        << "code=$?\n"
                        << "echo \"" << kTimeMarker << "$start $(date +%s.%N) $code\"\n";
  fs::permissions(script, fs::perms::owner_all);
  const double bound_s = BroadcastBoundSeconds(ctx.model, ctx.model.source, {}, ctx.size_bytes);
  GRIDCAST_ASSIGN_OR_RETURN(
      CommandOutput ran,
      RunCommand(SlurmExecArgv(*netgrid.FindNode(source), ctx.state_dir,
                               {"timeout", fmt::format("{:.0f}", 300 + 20 * bound_s), "sbatch", "--wait",
                                "--nodes=" + std::to_string(netgrid.nodes.size()), "--output=" + output.string(),
                                script.string()})));
  std::ifstream in(output);
  std::stringstream text;
  text << in.rdbuf();
  TimedJob job;
  job.output = text.str();
  const size_t marker = job.output.rfind(kTimeMarker);
  if (marker == std::string::npos) {
    return Status::Internal(fmt::format("the batch job failed (sbatch exit {}): {}{}", ran.exit_code, ran.output, job.output));
  }
  std::istringstream timing(job.output.substr(marker + std::string(kTimeMarker).size()));
  double start = 0, end = 0;
  timing >> start >> end >> job.command_exit;
  job.seconds = end - start;
  job.output.erase(marker);
  return job;
}

// Every node's copy at `relative` under its node-local directory, hashed against `digest`.
void CheckCopies(const BenchContext& ctx, const fs::path& relative, const Digest& digest, BenchOutcome* outcome) {
  std::vector<std::pair<std::string, Result<Digest>>> copies;
  for (const Node& node : ctx.model.nodes) {
    copies.emplace_back(node.name, FileSha256(SlurmNodeDir(ctx.state_dir, node.name) / relative));
  }
  RecordCopies(copies, digest, "nodes' copies", outcome);
}

struct SlurmBench {
  std::unique_ptr<BenchNetgrid> netgrid;
  fs::path payload;
  Digest digest{};
};

Result<SlurmBench> SlurmUp(const BenchContext& ctx) {
  SlurmBench bench;
  GRIDCAST_ASSIGN_OR_RETURN(bench.netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, std::nullopt));
  GRIDCAST_RETURN_IF_ERROR(StartSlurmOnNetgrid(bench.netgrid->state(), ctx.state_dir).status());
  std::error_code ec;
  fs::create_directories(ctx.state_dir / "payloads", ec);
  bench.payload = ctx.state_dir / "payloads" / kPayloadName;
  GRIDCAST_ASSIGN_OR_RETURN(bench.digest, WriteRandomPayload(bench.payload, ctx.size_bytes));
  return bench;
}

}  // namespace

Result<BenchOutcome> RunSbcast(const BenchContext& ctx) {
  std::string options = "--force";
  std::string algo = "sbcast";
  if (!ctx.args.algo.empty()) {
    const std::string prefix = "fanout:";
    if (ctx.args.algo.rfind(prefix, 0) != 0) return Status::InvalidArgument("--algo for --mode sbcast is fanout:N (1 to 8)");
    const int fanout = std::atoi(ctx.args.algo.c_str() + prefix.size());
    if (fanout < 1 || fanout > 8) return Status::InvalidArgument("--algo fanout:N: N from 1 to 8 (sbcast's limit)");
    options += fmt::format(" --fanout={}", fanout);
    algo += fmt::format(" --fanout={}", fanout);
  }
  if (!ctx.args.chunk.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(const uint64_t block, ParseSizeBytes(ctx.args.chunk));
    options += fmt::format(" --size={}", block);
    algo += " --size=" + FormatSize(block);
  }
  // Compression stays off, sbcast's default: the payload is random, and would not shrink.
  GRIDCAST_ASSIGN_OR_RETURN(SlurmBench bench, SlurmUp(ctx));
  const fs::path dest = SlurmLocalDir(ctx.state_dir) / kPayloadName;
  GRIDCAST_ASSIGN_OR_RETURN(TimedJob job, RunTimedJob(ctx, bench.netgrid->state(),
                                                      "sbcast " + options + " " + ShellQuote(bench.payload.string()) + " " +
                                                          ShellQuote(dest.string())));
  BenchOutcome outcome;
  outcome.algo = algo;
  outcome.completion_s = job.seconds;
  outcome.verified = job.command_exit == 0;
  if (job.command_exit != 0) outcome.details.push_back(fmt::format("sbcast exit {}: {}", job.command_exit, job.output));
  CheckCopies(ctx, kPayloadName, bench.digest, &outcome);
  return outcome;
}

Result<BenchOutcome> RunSlurmStage(const BenchContext& ctx) {
  GRIDCAST_ASSIGN_OR_RETURN(SlurmBench bench, SlurmUp(ctx));
  std::string command = ShellQuote(ProgramBesideSelf("gridcast")) + " slurm stage " + ShellQuote(bench.payload.string()) +
                        " --dest " + ShellQuote((SlurmLocalDir(ctx.state_dir) / "stage").string()) + " --json";
  // The network as the other modes' daemons know it (netgrid's cluster file names the topology).
  command += " --topology " + ShellQuote(fs::absolute(ctx.args.topology).string());
  if (!ctx.args.algo.empty()) command += " --algo " + ShellQuote(ctx.args.algo);
  if (!ctx.args.chunk.empty()) command += " --chunk " + ShellQuote(ctx.args.chunk);
  if (!ctx.args.digest.empty()) command += " --digest " + ShellQuote(ctx.args.digest);
  for (const std::string& extra : ctx.args.daemon_args) command += " " + ShellQuote("--daemon-arg=" + extra);
  // stage starts and stops the daemons inside the job: each receiver's counts over its whole
  // life, up to its last reading (the meter's thread reads them every 20 ms).
  const std::string& source = ctx.model.nodes[ctx.model.source].name;
  const std::vector<std::string> receivers = NodeNames(ctx.model, source);
  std::unique_ptr<DaemonCpuMeter> cpu_meter = DaemonCpuMeter::Start(bench.netgrid->state(), receivers);
  Result<TimedJob> ran = RunTimedJob(ctx, bench.netgrid->state(), command);
  const Result<std::map<std::string, double>> cpu_s = cpu_meter->Stop();
  if (!ran.ok()) return ran.status();
  const TimedJob& job = *ran;
  GRIDCAST_ASSIGN_OR_RETURN(nlohmann::json summary, ParseSendJson({job.command_exit, job.output}));
  BenchOutcome outcome;
  outcome.completion_s = job.seconds;
  try {
    outcome.algo = "slurm stage " + summary.at("algorithm").get<std::string>();
    outcome.verified = job.command_exit == 0 && summary.at("verified").get<bool>();
    if (summary.contains("digest")) outcome.digest = summary["digest"].get<std::string>();
    outcome.details.push_back(fmt::format("the broadcast itself: {:.3f} s; the rest started and stopped the daemons",
                                          summary.at("completion_s").get<double>()));
    if (summary.contains("control")) outcome.control = summary["control"];
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal(std::string("unexpected gridcast slurm stage summary: ") + e.what());
  }
  // When the stage's request reached its source daemon is not known here: no transfer window.
  RecordNodeCpu(cpu_s, std::nullopt, receivers, ctx.size_bytes, "gridcastd", &outcome);
  CheckCopies(ctx, fs::path("stage") / kPayloadName, bench.digest, &outcome);
  return outcome;
}

}  // namespace gridcast::cli
