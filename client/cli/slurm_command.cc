#include "client/cli/slurm_command.h"

#include <fmt/core.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <fmt/ranges.h>
#include <future>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "client/cli/cli_util.h"
#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "common/origin_url.h"
#include "deploy/slurm_job.h"
#include "deploy/subprocess.h"

namespace gridcast::cli {
namespace {

namespace fs = std::filesystem;

struct SlurmArgs {
  std::string path;
  std::string dest = "/tmp/gridcast-%j";
  std::string memory_dir = "/dev/shm/gridcast-%j-%N";
  std::string state = "/tmp/gridcast-slurm-%j";
  std::string name;
  std::string algo;
  std::string chunk;
  std::optional<PlanMode> mode;
  std::string digest;
  bool no_reuse = false;
  std::string topology;
  double timeout_s = 0;
  double stall_timeout_s = 0;
  double start_timeout_s = 60;
  int port_base = 0;
  bool keep = false;
  bool json = false;
  std::vector<std::string> daemon_args;
  OriginArgs origin;  // PATH is an http(s) URL: --header, --ca, --sha256, --size-limit
};

// Files of a job's daemons on the node that started them: the cluster file (with its
// secret, 0600), srun's pid and its log.
struct StateFiles {
  fs::path dir;
  fs::path cluster() const { return dir / "cluster.yaml"; }
  fs::path pid() const { return dir / "srun.pid"; }
  fs::path log() const { return dir / "daemons.log"; }
  fs::path settings() const { return dir / "settings"; }
};

// What kept daemons were started with: a later stage must ask for the same.
std::string DaemonSettingsOf(const SlurmArgs& args) {
  return fmt::format("dest {}\nmemory-dir {}\ntopology {}\nport-base {}\ndaemon-args {}\n", args.dest, args.memory_dir,
                     args.topology.empty() ? "" : fs::absolute(args.topology).string(), args.port_base,
                     fmt::format("{}", fmt::join(args.daemon_args, " ")));
}

Result<StateFiles> StateOf(const SlurmArgs& args, const SlurmJob& job) {
  GRIDCAST_ASSIGN_OR_RETURN(std::string dir, ExpandJobPattern(args.state, job.job_id, job.this_node));
  return StateFiles{fs::absolute(dir)};
}

// The state directory holds the secret and says which process to signal: it must be this
// user's own, private, real directory (a default path in /tmp can be made by anyone first).
// OK when it is, or when there is none yet.
Status CheckPrivate(const fs::path& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::Ok() : Status::FailedPrecondition("cannot inspect " + dir.string());
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    return Status::PermissionDenied(dir.string() + " is not a private directory of this user (a directory, owned by " +
                                    "it, mode 0700): refusing to keep a secret there; remove it or give --state");
  }
  return Status::Ok();
}

// A new file only this user reads; never follows a link, never reuses a file.
Status WritePrivateFile(const fs::path& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FailedPrecondition("cannot create " + path.string() + ": " + std::strerror(errno));
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return written ? Status::Ok() : Status::Internal("cannot write " + path.string());
}

std::string Tail(const fs::path& path, size_t bytes) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

bool Alive(int pid) {
  if (pid <= 0) return false;
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) == pid) return false;  // our child, and it ended
  return kill(pid, 0) == 0;
}

// The srun of a daemon step (its command line names the step), not a process that took its
// pid since.
bool IsDaemonStep(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cmdline.find(std::string("--job-name=gridcastd\0", 21)) != std::string::npos;
}

// The members whose daemons do not answer a status call within `per_call`, skipping those
// already known to answer.
std::vector<std::string> Silent(const ClusterConfig& cluster, std::chrono::milliseconds per_call,
                                std::set<std::string>* answered = nullptr) {
  std::vector<std::string> silent;
  for (const ClusterMember& member : cluster.members) {
    if (answered != nullptr && answered->count(member.name)) continue;
    ControlClient client(member.control_address, cluster.secret, {"", per_call});
    v1::StatusResponse response;
    if (!client.GetStatus(v1::StatusRequest(), &response).ok()) {
      silent.push_back(member.name);
    } else if (answered != nullptr) {
      answered->insert(member.name);
    }
  }
  return silent;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

// The daemons of an earlier `stage --keep` in this job, when they all still answer; an error
// when they were started with other settings than `args` asks for.
Result<bool> KeptDaemonsAnswer(const SlurmArgs& args, const StateFiles& state) {
  GRIDCAST_RETURN_IF_ERROR(CheckPrivate(state.dir));
  std::error_code ec;
  if (!fs::exists(state.cluster(), ec)) return false;
  Result<ClusterConfig> cluster = LoadCluster(state.cluster().string());
  if (!cluster.ok() || !Silent(*cluster, std::chrono::seconds(2)).empty()) return false;
  std::ifstream in(state.settings());
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (kept != DaemonSettingsOf(args)) {
    return Status::FailedPrecondition("the daemons kept in this job run with other settings:\n" + kept +
                                      "stage with the same ones, or run gridcast slurm stop first");
  }
  return true;
}

// The nodes whose daemon srun reported ended ("srun: error: NODE: task N: Exited with exit
// code C"): the stage need not wait for them any longer.
std::vector<std::string> NodesWhoseTaskExited(const fs::path& srun_log) {
  std::vector<std::string> nodes;
  std::ifstream in(srun_log);
  std::string line;
  const std::string prefix = "srun: error: ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0 || line.find(": task ") == std::string::npos) continue;
    const size_t end = line.find(':', prefix.size());
    nodes.push_back(line.substr(prefix.size(), end - prefix.size()));
  }
  return nodes;
}

// Stops the daemon step (SIGTERM to srun, which passes it to every gridcastd; SIGKILL after
// 15 s) and forgets it.
void StopDaemons(const StateFiles& state) {
  if (!CheckPrivate(state.dir).ok()) return;  // not ours: neither its pid nor its files
  std::ifstream in(state.pid());
  int pid = 0;
  if (in >> pid && pid > 0 && Alive(pid) && IsDaemonStep(pid)) {
    kill(pid, SIGTERM);
    for (int i = 0; i < 150 && Alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (Alive(pid) && IsDaemonStep(pid)) kill(pid, SIGKILL);
    for (int i = 0; i < 100 && Alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::error_code ec;
  fs::remove_all(state.dir, ec);
}

// Starts one gridcastd per node of the job (a step of its own, overlapping the job's other
// steps) and waits until every one answers.
Status StartDaemons(const SlurmArgs& args, const SlurmJob& job, const StateFiles& state) {
  GRIDCAST_RETURN_IF_ERROR(CheckPrivate(state.dir));
  // An earlier step whose daemons no longer all answer still holds the ports: end it first.
  StopDaemons(state);
  std::error_code ec;
  fs::create_directories(state.dir.parent_path(), ec);
  if (mkdir(state.dir.c_str(), 0700) != 0) {
    return Status::FailedPrecondition("cannot make " + state.dir.string() + ": " + std::strerror(errno));
  }
  const auto base = static_cast<uint16_t>(args.port_base > 0 ? args.port_base : JobPortBase(job.job_id));
  ClusterConfig cluster = SlurmClusterConfig(job, base, NewClusterSecret());
  if (!args.topology.empty()) cluster.topology_path = fs::absolute(args.topology).string();
  GRIDCAST_RETURN_IF_ERROR(WritePrivateFile(state.cluster(), FormatClusterFile(cluster)));
  GRIDCAST_RETURN_IF_ERROR(WritePrivateFile(state.settings(), DaemonSettingsOf(args)));

  const std::string nodes = std::to_string(job.nodes.size());
  std::vector<std::string> argv = {"srun", "--nodes=" + nodes, "--ntasks=" + nodes, "--ntasks-per-node=1",
                                   "--overlap", "--kill-on-bad-exit=0", "--label", "--job-name=gridcastd",
                                   ProgramBesideSelf("gridcast"), "slurm", "daemon", "--dest", args.dest,
                                   "--memory-dir", args.memory_dir};
  for (const std::string& extra : args.daemon_args) argv.push_back("--daemon-arg=" + extra);  // "=": a value that starts with "--"
  // srun hands its stdin to every task: each daemon reads the cluster file there, so the secret
  // is on no command line, in no environment and in no file on the other nodes.
  GRIDCAST_ASSIGN_OR_RETURN(const int pid, SpawnDetached(argv, state.log().string(), state.cluster().string()));
  GRIDCAST_RETURN_IF_ERROR(WritePrivateFile(state.pid(), std::to_string(pid) + "\n"));

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(args.start_timeout_s * 1000));
  std::vector<std::string> silent;
  std::set<std::string> answered;
  std::vector<std::string> exited;
  for (;;) {
    silent = Silent(cluster, std::chrono::seconds(2), &answered);
    if (silent.empty()) return Status::Ok();
    exited = NodesWhoseTaskExited(state.log());
    if (!exited.empty() || !Alive(pid) || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!exited.empty()) silent = exited;
  const std::string why = !exited.empty() ? "exited"
                          : Alive(pid)    ? "did not answer within " + fmt::format("{:g}", args.start_timeout_s) + " s"
                                          : "did not start (the daemon step ended)";
  const std::string log = Tail(state.log(), 3000);
  StopDaemons(state);
  return Status::Unavailable("the daemons of " + JoinNames(silent) + " " + why + "; their step's output:\n" + log);
}

bool OnANode(const SlurmJob& job) {
  return std::any_of(job.nodes.begin(), job.nodes.end(), [&](const SlurmNode& n) { return n.name == job.this_node; });
}

// The options stage passes on to gridcast send as they were given.
void AddSendOptions(const SlurmArgs& args, std::vector<std::string>* argv) {
  auto add = [&](const char* flag, const std::string& value) {
    if (!value.empty()) argv->insert(argv->end(), {flag, value});
  };
  add("--name", args.name);
  add("--algo", args.algo);
  add("--chunk", args.chunk);
  add("--mode", args.mode ? PlanModeName(*args.mode) : "");
  add("--digest", args.digest);
  if (args.no_reuse) argv->push_back("--no-reuse");
  if (args.timeout_s > 0) add("--timeout", fmt::format("{:g}", args.timeout_s));
  if (args.stall_timeout_s > 0) add("--stall-timeout", fmt::format("{:g}", args.stall_timeout_s));
  if (args.json) argv->push_back("--json");
  PassOriginArgs(args.origin, argv);
}

// Runs the same `gridcast slurm stage` on the job's first node (a shell of salloc runs outside
// the job's nodes, where no daemon can be the source).
int StageOnFirstNode(const SlurmArgs& args, const SlurmJob& job, const fs::path& payload) {
  std::vector<std::string> argv = {"srun", "--nodes=1", "--ntasks=1", "--overlap", "--nodelist=" + job.nodes.front().name,
                                   ProgramBesideSelf("gridcast"), "slurm", "stage", payload.string(), "--dest", args.dest,
                                   "--memory-dir", args.memory_dir, "--state", args.state,
                                   "--start-timeout", fmt::format("{:g}", args.start_timeout_s)};
  AddSendOptions(args, &argv);
  if (args.port_base > 0) argv.insert(argv.end(), {"--port-base", std::to_string(args.port_base)});
  if (!args.topology.empty()) argv.insert(argv.end(), {"--topology", fs::absolute(args.topology).string()});
  for (const std::string& extra : args.daemon_args) argv.push_back("--daemon-arg=" + extra);  // "=": a value that starts with "--"
  if (args.keep) argv.push_back("--keep");
  Result<ChildProcess> child = ChildProcess::Start(argv);
  if (!child.ok()) return ReportError(child.status());
  return child->Wait();
}

// The source node's copy: DEST/NAME, written beside it and renamed into place once whole.
Status CopyToDest(const fs::path& payload, const SlurmArgs& args, const SlurmJob& job, const std::string& name) {
  GRIDCAST_ASSIGN_OR_RETURN(const std::string dest, ExpandJobPattern(args.dest, job.job_id, job.this_node));
  const fs::path target = fs::absolute(dest) / name;
  std::error_code ec;
  if (fs::equivalent(payload, target, ec)) return Status::Ok();
  const fs::path partial = target.parent_path() / ("." + name + ".gridcast-copy");
  fs::create_directories(target.parent_path(), ec);
  fs::remove_all(partial, ec);
  fs::copy(payload, partial, fs::copy_options::recursive, ec);
  if (!ec) fs::remove_all(target, ec);
  if (!ec) fs::rename(partial, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove_all(partial, ec);
    return Status::Internal("cannot copy " + payload.string() + " to " + target.string() + ": " + why);
  }
  return Status::Ok();
}

int Stage(const SlurmArgs& args) {
  Result<SlurmJob> job = CurrentSlurmJob();
  if (!job.ok()) return ReportError(job.status());
  // A URL is fetched by the source daemon, which keeps its copy in its data directory (DEST):
  // there is no local file to check or copy.
  const bool url = IsHttpUrl(args.path);
  std::error_code ec;
  const fs::path payload = url ? fs::path(args.path) : fs::absolute(args.path, ec);
  if (!url && !fs::is_regular_file(payload, ec) && !fs::is_directory(payload, ec)) {
    return ReportError(Status::InvalidArgument("payload " + args.path + " is not a readable file or directory"));
  }
  for (const std::string& pattern : {args.dest, args.memory_dir, args.state}) {
    if (Status valid = ExpandJobPattern(pattern, "", "").status(); !valid.ok()) return ReportError(valid);
  }
  if (!args.topology.empty()) {
    Result<NetworkModel> model = LoadTopology(args.topology);
    if (!model.ok()) return ReportError(model.status());
    for (const SlurmNode& node : job->nodes) {
      if (!model->FindNode(node.name)) {
        return ReportError(Status::InvalidArgument("--topology " + args.topology + " has no node '" + node.name +
                                                   "' (its nodes must carry the job's Slurm node names)"));
      }
    }
  }
  if (!OnANode(*job)) {
    if (args.keep) {
      return ReportError(Status::FailedPrecondition(
          "--keep needs stage to run on a node of the job (in the batch script): from here it runs in a step of "
          "its own, whose end would end the kept daemons"));
    }
    return StageOnFirstNode(args, *job, payload);
  }

  Result<StateFiles> state = StateOf(args, *job);
  if (!state.ok()) return ReportError(state.status());
  Result<bool> kept = KeptDaemonsAnswer(args, *state);
  if (!kept.ok()) return ReportError(kept.status());
  if (!*kept) {
    if (Status started = StartDaemons(args, *job, *state); !started.ok()) return ReportError(started);
  }
  std::vector<std::string> argv = {ProgramBesideSelf("gridcast"), "send", payload.string(), "--cluster",
                                   state->cluster().string(), "--source", job->this_node};
  AddSendOptions(args, &argv);
  // The node running stage is the source: the daemons send from PATH, and its own copy in DEST
  // is made meanwhile, on its disk.
  const std::string name = args.name.empty() ? payload.filename().string() : args.name;
  std::future<Status> local_copy = std::async(std::launch::async, [&] {
    return url ? Status::Ok() : CopyToDest(payload, args, *job, name);
  });
  Result<ChildProcess> send = ChildProcess::Start(argv);
  int code = send.ok() ? send->Wait() : ReportError(send.status());
  if (Status copied = local_copy.get(); !copied.ok()) {
    fmt::print(stderr, "gridcast: {}: {}\n", job->this_node, copied.message());
    code = kExitFailure;
  }
  if (args.keep) {
    fmt::print(stderr,
               "gridcast: the daemons stay up for this job: gridcast send FILE --cluster {} (or slurm stage "
               "again); gridcast slurm stop ends them\n",
               state->cluster().string());
  } else {
    StopDaemons(*state);
  }
  return code;
}

int Stop(const SlurmArgs& args) {
  Result<SlurmJob> job = CurrentSlurmJob();
  if (!job.ok()) return ReportError(job.status());
  if (!OnANode(*job)) {
    return ReportError(Status::FailedPrecondition("kept daemons are stopped where stage ran: in the batch script"));
  }
  Result<StateFiles> state = StateOf(args, *job);
  if (!state.ok()) return ReportError(state.status());
  if (Status mine = CheckPrivate(state->dir); !mine.ok()) return ReportError(mine);
  std::error_code ec;
  if (!fs::exists(state->pid(), ec)) {
    return ReportError(Status::NotFound("no daemons of this job were kept here (no " + state->pid().string() + ")"));
  }
  StopDaemons(*state);
  return kExitOk;
}

// One node's daemon, run by srun: gridcastd itself, reading the cluster file from its stdin
// (srun's, fed by stage), so the secret never touches a node's disk.
int Daemon(const SlurmArgs& args) {
  const char* node = std::getenv("SLURMD_NODENAME");
  const char* job_id = std::getenv("SLURM_JOB_ID");
  if (node == nullptr || job_id == nullptr) {
    return ReportError(Status::FailedPrecondition("gridcast slurm daemon runs in a job step (srun), started by stage"));
  }
  Result<std::string> dest = ExpandJobPattern(args.dest, job_id, node);
  Result<std::string> memory = ExpandJobPattern(args.memory_dir, job_id, node);
  if (!dest.ok() || !memory.ok()) return ReportError(!dest.ok() ? dest.status() : memory.status());
  // A job's daemons belong to the user who runs the job and answer only to its secret: they may
  // send any file that user can read (stage's PATH, and later payloads of --keep).
  std::vector<std::string> argv = {ProgramBesideSelf("gridcastd"), "--name", node, "--cluster", "/dev/stdin",
                                   "--data-dir", *dest, "--memory-dir", *memory, "--send-root", "/"};
  argv.insert(argv.end(), args.daemon_args.begin(), args.daemon_args.end());
  std::vector<char*> raw;
  for (std::string& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  // Replaced by gridcastd: the SIGTERM srun passes on when the step ends reaches it directly.
  execv(raw[0], raw.data());
  return ReportError(Status::FailedPrecondition("cannot run " + argv[0] + ": " + std::strerror(errno)));
}

}  // namespace

void AddSlurmCommands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SlurmArgs>();
  CLI::App* slurm = app.add_subcommand("slurm", "Stage payloads on the nodes of a Slurm job (docs/slurm.md)");
  slurm->require_subcommand(1);
  auto add_state = [args](CLI::App* command) {
    command->add_option("--state", args->state,
                        "Where the daemons' cluster file and log are kept on the node running stage "
                        "(default /tmp/gridcast-slurm-%j)");
  };

  CLI::App* stage = slurm->add_subcommand(
      "stage", "Inside an allocation: start a gridcastd per node, broadcast PATH to every node, print the summary, "
               "stop the daemons; exit 0 only when every node holds a verified copy");
  stage->add_option("path", args->path,
                    "The file or directory to stage (readable on the node running stage), or an http:// or https:// "
                    "URL that node's daemon fetches while it sends (docs/origin.md)")
      ->required();
  stage->add_option("--dest", args->dest,
                    "Directory on every node the payload lands in, as DEST/NAME; %j the job id, %N the node's name "
                    "(default /tmp/gridcast-%j)");
  stage->add_option("--memory-dir", args->memory_dir,
                    "Daemons' in-memory directory on every node (default /dev/shm/gridcast-%j-%N)");
  stage->add_option("--name", args->name, "Name at the nodes (default: the file's name)");
  stage->add_option("--algo", args->algo, "Planner, as for gridcast send (default auto)");
  stage->add_option("--chunk", args->chunk, "Chunk size, e.g. 4MiB (default: the planner's)");
  AddPlanModeOption(stage, &args->mode, "push, pull or hybrid, as for gridcast send");
  stage->add_option("--digest", args->digest, kDigestHelp);
  stage->add_flag("--no-reuse", args->no_reuse,
                  "The nodes take nothing from an earlier copy they hold (by default each receives only the chunks "
                  "it does not find in it; docs/delta.md)");
  stage->add_option("--topology", args->topology,
                    "Topology file whose nodes are the job's (by Slurm name), read on the node running stage: "
                    "auto plans by it (default: none, auto plans for an unknown network)");
  stage->add_option("--timeout", args->timeout_s, "Seconds for the whole broadcast (default: from the size)");
  stage->add_option("--stall-timeout", args->stall_timeout_s, "As for gridcast send (default 60)");
  stage->add_option("--start-timeout", args->start_timeout_s, "Seconds for every daemon to answer (default 60)");
  stage->add_option("--port-base", args->port_base,
                    "Control port of every daemon; data and BitTorrent take the next two (default: from the job id)");
  stage->add_option("--daemon-arg", args->daemon_args, "Extra argument for every gridcastd (repeatable)");
  stage->add_flag("--keep", args->keep,
                  "Leave the daemons running for more stages (or gridcast send with the kept cluster file) in this job");
  stage->add_flag("--json", args->json, "Print the summary as JSON (gridcast send --json)");
  AddOriginOptions(stage, &args->origin);
  add_state(stage);
  stage->callback([args, exit_code] { *exit_code = Stage(*args); });

  CLI::App* stop = slurm->add_subcommand("stop", "Stop the daemons a stage --keep left in this job");
  add_state(stop);
  stop->callback([args, exit_code] { *exit_code = Stop(*args); });

  CLI::App* daemon = slurm->add_subcommand("daemon", "One node's gridcastd in a job step (run by stage through srun)");
  daemon->add_option("--dest", args->dest, "Data directory pattern")->required();
  daemon->add_option("--memory-dir", args->memory_dir, "Memory directory pattern")->required();
  daemon->add_option("--daemon-arg", args->daemon_args, "Extra argument for gridcastd");
  daemon->callback([args, exit_code] { *exit_code = Daemon(*args); });
}

}  // namespace gridcast::cli
