#include "deploy/netgrid.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "cluster/cluster_file.h"
#include "cluster/cluster_pki.h"
#include "collectives/topology.h"
#include "common/file_io.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kStateFile = "netgrid.json";

// The processes in the network namespaces `namespaces`, as `ip netns pids` lists them: those
// whose /proc/PID/ns/net is a file /run/netns/NETNS binds (same device and inode), found in one
// pass over /proc however many namespaces there are (256 namespaces one pass each, every 100
// ms while their daemons stopped, kept the two cores busy). With `comm` set, only those whose
// /proc/PID/comm is it. Processes that end meanwhile are skipped.
std::vector<int> NamespacePids(const std::vector<std::string>& namespaces, const std::string& comm = "") {
  std::vector<int> pids;
  std::set<std::pair<dev_t, ino_t>> wanted;
  for (const std::string& netns : namespaces) {
    struct stat bound {};
    if (stat(("/run/netns/" + netns).c_str(), &bound) == 0) wanted.emplace(bound.st_dev, bound.st_ino);
  }
  if (wanted.empty()) return pids;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat net {};
    if (stat((entry.path() / "ns" / "net").c_str(), &net) != 0) continue;
    if (wanted.count({net.st_dev, net.st_ino}) == 0) continue;
    if (!comm.empty()) {
      std::string own;
      if (!std::getline(std::ifstream(entry.path() / "comm"), own) || own != comm) continue;
    }
    pids.push_back(std::stoi(name));
  }
  return pids;
}

// SIGTERM everything in the namespaces, give it a moment, then SIGKILL what is left.
void StopProcesses(const std::vector<std::string>& namespaces) {
  const std::vector<int> running = NamespacePids(namespaces);
  if (running.empty()) return;
  for (int pid : running) kill(pid, SIGTERM);
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (NamespacePids(namespaces).empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (int pid : NamespacePids(namespaces)) kill(pid, SIGKILL);
}

// The kernel's ARP table is one table for every namespace, with host-wide limits (1,024
// entries by default). A netgrid of N nodes whose members all talk to one another holds about
// N x (N - 1) entries: at 64 nodes that is 4,032, and past the limit the kernel drops entries
// and packets ("neighbor table overflow"), so connections stall and every re-resolution floods
// the bridge. Raises the limits to fit (never lowers them: another netgrid or the host may need
// more) and says what it did, or returns an empty note when they already fit.
Result<std::string> FitNeighbourTable(size_t nodes) {
  const uint64_t needed = static_cast<uint64_t>(nodes) * nodes;
  const char* kDir = "/proc/sys/net/ipv4/neigh/default/";
  // gc_thresh1: entries below it are never collected; gc_thresh3: the hard limit.
  const std::pair<const char*, uint64_t> wanted[] = {
      {"gc_thresh1", needed}, {"gc_thresh2", 2 * needed}, {"gc_thresh3", 4 * needed}};
  std::string raised;
  for (const auto& [name, value] : wanted) {
    const std::string path = std::string(kDir) + name;
    uint64_t current = 0;
    if (!(std::ifstream(path) >> current)) return Status::Internal("cannot read " + path);
    if (current >= value) continue;
    std::ofstream out(path);
    if (!(out << value << "\n") || !out.flush()) return Status::Internal("cannot raise " + path);
    raised += (raised.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(current) + " -> " +
              std::to_string(value);
  }
  if (raised.empty()) return std::string();
  return "raised the host's ARP table limits (net.ipv4.neigh.default: " + raised +
         "): the table is shared by every namespace and " + std::to_string(nodes) +
         " nodes may each hold a neighbour for every other";
}

json ToJson(const NetgridState& state) {
  json nodes = json::array();
  for (const NetgridNode& node : state.nodes) {
    nodes.push_back({{"name", node.name}, {"netns", node.netns}, {"address", node.address},
                     {"switch", node.switch_name}});
  }
  return {{"prefix", state.prefix}, {"topology", state.topology_name}, {"nodes", nodes},
          {"switch_netns", state.switch_netns}, {"notes", state.notes}};
}

}  // namespace

fs::path NetgridMemoryRoot(const std::string& prefix) { return fs::path("/dev/shm") / ("gridcast-" + prefix); }

const NetgridNode* NetgridState::FindNode(const std::string& name) const {
  for (const NetgridNode& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

fs::path DefaultNetgridStateDir() { return "/tmp/gridcast-netgrid"; }

std::string NetgridPrefix(const fs::path& state_dir) {
  // FNV-1a over the absolute path: stable across runs, distinct for distinct directories.
  const std::string path = fs::absolute(state_dir).lexically_normal().string();
  uint32_t hash = 2166136261u;
  for (unsigned char c : path) {
    hash ^= c;
    hash *= 16777619u;
  }
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "gc%06x", hash & 0xffffffu);
  return buffer;
}

Result<std::vector<std::string>> ListNetgridNamespaces(const std::string& prefix) {
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand({"ip", "netns", "list"}));
  if (out.exit_code != 0) return Status::Internal("ip netns list failed: " + out.output);
  std::vector<std::string> result;
  std::istringstream lines(out.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::string name = line.substr(0, line.find(' '));
    if (name.rfind(prefix + "-", 0) == 0) result.push_back(name);
  }
  return result;
}

Result<NetgridState> NetgridUp(const NetworkModel& model, const fs::path& state_dir) {
  if (geteuid() != 0) {
    return Status::PermissionDenied("netgrid needs root to create network namespaces");
  }
  const std::string prefix = NetgridPrefix(state_dir);
  GRIDCAST_ASSIGN_OR_RETURN(std::vector<std::string> existing, ListNetgridNamespaces(prefix));
  if (!existing.empty() || fs::exists(state_dir / kStateFile)) {
    return Status::FailedPrecondition("a netgrid is already up with state " + state_dir.string() +
                                      "; run 'gridcast netgrid down --state " +
                                      state_dir.string() + "' first");
  }
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (ec) return Status::Internal("cannot create " + state_dir.string() + ": " + ec.message());

  NetgridLayout layout = PlanNetgrid(model, prefix);
  GRIDCAST_ASSIGN_OR_RETURN(std::string neighbour_note, FitNeighbourTable(layout.nodes.size()));
  if (!neighbour_note.empty()) layout.notes.push_back(std::move(neighbour_note));
  NetgridState state{prefix, model.name, layout.nodes, layout.switch_netns, layout.notes};
  for (const std::vector<std::string>& command : layout.setup_commands) {
    Status status = RunChecked(command);
    if (!status.ok()) {
      Status cleanup = NetgridDown(state_dir);
      std::string message = "netgrid up failed, rolled back: " + status.message();
      if (!cleanup.ok()) message += " (rollback: " + cleanup.message() + ")";
      return Status(status.code(), message);
    }
  }
  Status written = WriteFileAtomically(state_dir / kStateFile, ToJson(state).dump(2) + "\n", 0644);
  if (!written.ok()) {
    (void)NetgridDown(state_dir);
    return written;
  }
  return state;
}

Status NetgridDown(const fs::path& state_dir) {
  const std::string prefix = NetgridPrefix(state_dir);
  GRIDCAST_ASSIGN_OR_RETURN(std::vector<std::string> namespaces, ListNetgridNamespaces(prefix));
  StopProcesses(namespaces);
  for (const std::string& netns : namespaces) {
    GRIDCAST_RETURN_IF_ERROR(RunChecked({"ip", "netns", "del", netns}));
  }
  std::error_code ec;
  fs::remove_all(NetgridMemoryRoot(prefix), ec);  // what daemons killed without a chance to clean left
  fs::remove(state_dir / kStateFile, ec);
  if (ec) return Status::Internal("cannot remove state file: " + ec.message());
  return Status::Ok();
}

void SignalNetgridNode(const NetgridNode& node, int signal) {
  for (int pid : NamespacePids({node.netns})) kill(pid, signal);
}

std::vector<int> NetgridNodePids(const NetgridNode& node, const std::string& comm) {
  return NamespacePids({node.netns}, comm);
}

Result<NetgridState> LoadNetgridState(const fs::path& state_dir) {
  const fs::path path = state_dir / kStateFile;
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound("no netgrid is up with state " + state_dir.string() +
                            " (no " + path.string() + ")");
  }
  try {
    json j = json::parse(in);
    NetgridState state;
    state.prefix = j.at("prefix").get<std::string>();
    state.topology_name = j.at("topology").get<std::string>();
    for (const json& node : j.at("nodes")) {
      state.nodes.push_back({node.at("name").get<std::string>(), node.at("netns").get<std::string>(),
                             node.at("address").get<std::string>(),
                             node.at("switch").get<std::string>()});
    }
    state.switch_netns = j.at("switch_netns").get<std::vector<std::string>>();
    state.notes = j.at("notes").get<std::vector<std::string>>();
    return state;
  } catch (const json::exception& e) {
    return Status::DataLoss("corrupt netgrid state " + path.string() + ": " + e.what());
  }
}

Result<std::string> StartNetgridDaemons(const NetworkModel& model, const NetgridState& state,
                                        const fs::path& state_dir, const NetgridDaemonOptions& options) {
  const fs::path root = fs::absolute(state_dir);
  std::error_code ec;
  for (const char* sub : {"run", "data", "logs", "payloads"}) fs::create_directories(root / sub, ec);
  if (ec) return Status::Internal("cannot create directories in " + root.string() + ": " + ec.message());
  GRIDCAST_RETURN_IF_ERROR(WriteFileAtomically(root / "topology.yaml", FormatTopology(model), 0644));

  ClusterConfig cluster;
  cluster.secret = NewClusterSecret();
  cluster.topology_path = (root / "topology.yaml").string();
  if (options.tls) {
    std::vector<PkiMember> certified;
    // localhost: gRPC's authority for the unix: control sockets.
    for (const NetgridNode& node : state.nodes) certified.push_back({node.name, {node.address, "localhost"}});
    GRIDCAST_RETURN_IF_ERROR(WriteClusterPki(root / "pki", certified));
    cluster.tls_ca_path = (root / "pki" / "ca.pem").string();
  }
  for (const NetgridNode& node : state.nodes) {
    cluster.members.push_back({node.name, "unix:" + (root / "run" / (node.name + ".sock")).string(),
                               node.address + ":" + std::to_string(options.data_port),
                               node.address + ":" + std::to_string(options.data_port + 1)});
    fs::remove(root / "run" / (node.name + ".sock"), ec);
  }
  const fs::path cluster_file = root / "cluster.yaml";
  GRIDCAST_RETURN_IF_ERROR(WriteFileAtomically(cluster_file, FormatClusterFile(cluster), 0600));
  fs::permissions(cluster_file, fs::perms::owner_read | fs::perms::owner_write, ec);

  for (const NetgridNode& node : state.nodes) {
    std::vector<std::string> argv = {options.gridcastd, "--name", node.name, "--cluster",
                                     cluster_file.string(), "--data-dir", (root / "data" / node.name).string(),
                                     "--memory-dir", (NetgridMemoryRoot(state.prefix) / node.name).string(),
                                     "--send-root", (root / "payloads").string()};
    if (options.tls) {
      argv.insert(argv.end(), {"--tls-cert", (root / "pki" / (node.name + ".pem")).string(), "--tls-key",
                               (root / "pki" / (node.name + ".key")).string()});
    }
    argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
    Result<int> pid = SpawnDetached(NetgridExecArgv(node, argv), (root / "logs" / (node.name + ".log")).string());
    if (!pid.ok()) return pid.status();
  }
  // Ready when every control socket exists (gridcastd binds it last). The daemons start at
  // once and share the host's cores: more of them take longer (64 sanitized ones on 2 cores
  // took more than 20 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20) +
                        std::chrono::milliseconds(500) * state.nodes.size();
  for (const NetgridNode& node : state.nodes) {
    const fs::path socket = root / "run" / (node.name + ".sock");
    while (!fs::exists(socket)) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::Unavailable("gridcastd on " + node.name + " did not start; see " +
                                   (root / "logs" / (node.name + ".log")).string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return cluster_file.string();
}

std::vector<std::string> NetgridExecArgv(const NetgridNode& node,
                                         const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"ip", "netns", "exec", node.netns};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace gridcast
