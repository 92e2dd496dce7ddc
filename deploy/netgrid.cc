#include "deploy/netgrid.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kStateFile = "netgrid.json";

std::vector<int> NamespacePids(const std::string& netns) {
  std::vector<int> pids;
  Result<CommandOutput> out = RunCommand({"ip", "netns", "pids", netns});
  if (!out.ok() || out->exit_code != 0) return pids;
  std::istringstream lines(out->output);
  int pid = 0;
  while (lines >> pid) pids.push_back(pid);
  return pids;
}

// SIGTERM everything in the namespaces, give it a moment, then SIGKILL what is left.
void StopProcesses(const std::vector<std::string>& namespaces) {
  bool any = false;
  for (const std::string& netns : namespaces) {
    for (int pid : NamespacePids(netns)) {
      kill(pid, SIGTERM);
      any = true;
    }
  }
  if (!any) return;
  for (int attempt = 0; attempt < 50; ++attempt) {
    bool alive = false;
    for (const std::string& netns : namespaces) alive = alive || !NamespacePids(netns).empty();
    if (!alive) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const std::string& netns : namespaces) {
    for (int pid : NamespacePids(netns)) kill(pid, SIGKILL);
  }
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

Status WriteFileAtomically(const fs::path& path, const std::string& text) {
  const fs::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::Internal("cannot write " + temp.string());
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) return Status::Internal("cannot rename " + temp.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

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
  Status written = WriteFileAtomically(state_dir / kStateFile, ToJson(state).dump(2) + "\n");
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
  fs::remove(state_dir / kStateFile, ec);
  if (ec) return Status::Internal("cannot remove state file: " + ec.message());
  return Status::Ok();
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

std::vector<std::string> NetgridExecArgv(const NetgridNode& node,
                                         const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"ip", "netns", "exec", node.netns};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace gridcast
