#include "deploy/slurm_netgrid.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "common/crypto.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

fs::path SlurmDir(const fs::path& state_dir) { return fs::absolute(state_dir) / "slurm"; }
fs::path MungeSocket(const fs::path& state_dir) { return SlurmDir(state_dir) / "munge-socket" / "socket"; }

std::vector<std::string> InNetns(const NetgridNode& node, std::vector<std::string> command) {
  std::vector<std::string> argv = {"nsenter", "--net=/run/netns/" + node.netns};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::string SlurmConf(const NetgridState& netgrid, const fs::path& state_dir) {
  const fs::path dir = SlurmDir(state_dir);
  const NetgridNode& controller = netgrid.nodes.front();
  std::string conf = fmt::format(
      "# Written by StartSlurmOnNetgrid (deploy/slurm_netgrid.h) for netgrid {}.\n"
      "ClusterName=netgrid\n"
      "SlurmctldHost={}({})\n"
      "AuthType=auth/munge\n"
      "AuthInfo=socket={}\n"
      "CredType=cred/munge\n"
      "SlurmUser=root\n"
      "SlurmdUser=root\n"
      "StateSaveLocation={}/ctld\n"
      "SlurmctldPidFile={}/slurmctld.pid\n"
      "SlurmctldLogFile={}/slurmctld.log\n"
      "SlurmdSpoolDir={}/spool/%n\n"
      "SlurmdPidFile={}/slurmd-%n.pid\n"
      "SlurmdLogFile={}/slurmd-%n.log\n"
      // No cgroups: linuxproc tracks a step's processes by parentage, enough for a test.
      "ProctrackType=proctrack/linuxproc\n"
      "TaskPlugin=task/none\n"
      "SwitchType=switch/none\n"
      "MpiDefault=none\n"
      "SchedulerType=sched/builtin\n"
      "SelectType=select/linear\n"
      "ReturnToService=2\n"
      "JobCompType=jobcomp/none\n"
      "AccountingStorageType=accounting_storage/none\n"
      "JobAcctGatherType=jobacct_gather/none\n"
      // The nodes are namespaces of one host: trust the configured CPUs, not what it has.
      "SlurmdParameters=config_overrides\n"
      "KillWait=5\n"
      // Round trips over the emulated slow links: sbcast's 8 MB blocks, forwarded to up to 8
      // nodes behind one 50mbit uplink, take longer than the default 10 s.
      "MessageTimeout=60\n",
      netgrid.topology_name, controller.name, controller.address, MungeSocket(state_dir).string(), dir.string(),
      dir.string(), dir.string(), dir.string(), dir.string(), dir.string());
  for (const NetgridNode& node : netgrid.nodes) {
    conf += fmt::format("NodeName={} NodeAddr={} CPUs=1 State=UNKNOWN\n", node.name, node.address);
  }
  conf += "PartitionName=netgrid Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  return conf;
}

// Polls `ready` every 100 ms for up to `seconds`.
bool WaitFor(const std::function<bool()>& ready, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

fs::path SlurmLocalDir(const fs::path& state_dir) { return SlurmDir(state_dir) / "local"; }

fs::path SlurmNodeDir(const fs::path& state_dir, const std::string& node) { return SlurmDir(state_dir) / "nodes" / node; }

std::vector<std::string> SlurmExecArgv(const NetgridNode& node, const fs::path& state_dir,
                                       const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"env", "SLURM_CONF=" + (SlurmDir(state_dir) / "slurm.conf").string()};
  argv.insert(argv.end(), command.begin(), command.end());
  return InNetns(node, std::move(argv));
}

Result<fs::path> StartSlurmOnNetgrid(const NetgridState& netgrid, const fs::path& state_dir) {
  if (netgrid.nodes.empty()) return Status::InvalidArgument("a netgrid without nodes");
  const fs::path dir = SlurmDir(state_dir);
  std::error_code ec;
  fs::remove_all(dir, ec);
  for (const fs::path& sub : {dir / "ctld", dir / "spool", dir / "local", dir / "munge", dir / "munge-socket"}) {
    fs::create_directories(sub, ec);
    if (ec) return Status::Internal("cannot make " + sub.string() + ": " + ec.message());
  }
  for (const NetgridNode& node : netgrid.nodes) fs::create_directories(SlurmNodeDir(state_dir, node.name), ec);
  // munged insists: its key readable by its user only, its socket's directory open to all.
  fs::permissions(dir / "munge", fs::perms::owner_all, ec);
  fs::permissions(dir / "munge-socket", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                            fs::perms::others_read | fs::perms::others_exec, ec);
  std::string key(1024, '\0');
  RandomBytes({reinterpret_cast<uint8_t*>(key.data()), key.size()});
  std::ofstream(dir / "munge" / "munge.key", std::ios::binary) << key;
  fs::permissions(dir / "munge" / "munge.key", fs::perms::owner_read | fs::perms::owner_write, ec);
  std::ofstream(dir / "slurm.conf") << SlurmConf(netgrid, state_dir);
  // The nodes' names resolve as on a real cluster (Slurm's message forwarding looks some up).
  {
    std::ofstream hosts(dir / "hosts");
    hosts << "127.0.0.1 localhost\n";
    for (const NetgridNode& node : netgrid.nodes) hosts << node.address << " " << node.name << "\n";
  }

  const NetgridNode& first = netgrid.nodes.front();
  GRIDCAST_RETURN_IF_ERROR(RunChecked(InNetns(
      first, {"munged", "--key-file=" + (dir / "munge" / "munge.key").string(), "--socket=" + MungeSocket(state_dir).string(),
              "--pid-file=" + (dir / "munge" / "munged.pid").string(), "--log-file=" + (dir / "munge" / "munged.log").string(),
              "--seed-file=" + (dir / "munge" / "munged.seed").string()})));
  if (!WaitFor([&] { return fs::exists(MungeSocket(state_dir)); }, 10)) {
    return Status::Unavailable("munged did not start: " + ReadAll(dir / "munge" / "munged.log"));
  }
  // A daemon per node, each in its own UTS and mount namespace, seeing the nodes' hosts file.
  auto start = [&](const NetgridNode& node, const std::string& shell) {
    return RunChecked(SlurmExecArgv(node, state_dir, {"unshare", "--uts", "--mount", "sh", "-c",
                                                      "hostname " + ShellQuote(node.name) + " && mount --bind " +
                                                          ShellQuote((dir / "hosts").string()) + " /etc/hosts && " + shell}));
  };
  GRIDCAST_RETURN_IF_ERROR(start(first, "exec slurmctld -i"));
  if (!WaitFor([&] {
        Result<CommandOutput> ping = RunCommand(SlurmExecArgv(first, state_dir, {"scontrol", "ping"}));
        return ping.ok() && ping->output.find("is UP") != std::string::npos;
      }, 30)) {
    return Status::Unavailable("slurmctld did not come up: " + ReadAll(dir / "slurmctld.log"));
  }
  for (const NetgridNode& node : netgrid.nodes) {
    GRIDCAST_RETURN_IF_ERROR(start(node, "mount --bind " + ShellQuote(SlurmNodeDir(state_dir, node.name).string()) +
                                             " " + ShellQuote(SlurmLocalDir(state_dir).string()) + " && exec slurmd"));
  }
  std::string states;
  if (!WaitFor([&] {
        Result<CommandOutput> info = RunCommand(SlurmExecArgv(first, state_dir, {"sinfo", "--noheader", "--format=%T %D"}));
        states = info.ok() ? info->output : info.status().message();
        return info.ok() && info->exit_code == 0 &&
               states == fmt::format("idle {}\n", netgrid.nodes.size());
      }, 60)) {
    return Status::Unavailable("the slurmds did not all register as idle: sinfo says " + states);
  }
  return dir / "slurm.conf";
}

}  // namespace gridcast
