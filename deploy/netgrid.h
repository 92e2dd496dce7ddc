// Netgrid: an emulated multi-site network on one Linux host, built from a topology file.
//
// Up() creates the namespaces, bridges, veths and tc shaping that PlanNetgrid() describes and
// records them in STATE/netgrid.json; Down() removes everything with the state's prefix (also
// what a crashed Up() left) and is idempotent. The prefix is derived from the state directory,
// so two netgrids with different state directories coexist. Needs root (CAP_NET_ADMIN).
// Not thread-safe with respect to one state directory: callers serialise up/down.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "include/gridcast/result.h"
#include "deploy/netgrid_layout.h"

namespace gridcast {

struct NetgridState {
  std::string prefix;
  std::string topology_name;
  std::vector<NetgridNode> nodes;
  std::vector<std::string> switch_netns;
  std::vector<std::string> notes;

  // nullptr when no node has that name.
  const NetgridNode* FindNode(const std::string& name) const;
};

// The default state directory when --state is not given.
std::filesystem::path DefaultNetgridStateDir();

// "gc" + 6 hex digits of a hash of the absolute state directory path.
std::string NetgridPrefix(const std::filesystem::path& state_dir);

// The daemons' memory directories (tmpfs; ROOT/NODE): one per netgrid, so that down removes
// them even after a SIGKILL.
std::filesystem::path NetgridMemoryRoot(const std::string& prefix);

// Builds the network. On any failure removes what it made and returns the error.
Result<NetgridState> NetgridUp(const NetworkModel& model, const std::filesystem::path& state_dir);

// Stops processes inside the netgrid's namespaces and deletes the namespaces (their veths and
// qdiscs go with them) and the state file. OK when nothing is up.
Status NetgridDown(const std::filesystem::path& state_dir);

// Reads STATE/netgrid.json. NotFound when no netgrid is up there.
Result<NetgridState> LoadNetgridState(const std::filesystem::path& state_dir);

// Sends `signal` to every process in the node's namespace, for failure tests: SIGKILL is a
// crashed machine, SIGSTOP a paused one (SIGCONT resumes it).
void SignalNetgridNode(const NetgridNode& node, int signal);

// The processes in the node's namespace (as `ip netns pids` lists them); with `comm` set, only
// those whose name (/proc/PID/comm, at most 15 characters) is it, e.g. "gridcastd".
std::vector<int> NetgridNodePids(const NetgridNode& node, const std::string& comm = "");

// Namespaces currently present whose names start with "<prefix>-".
Result<std::vector<std::string>> ListNetgridNamespaces(const std::string& prefix);

struct NetgridDaemonOptions {
  std::string gridcastd = "gridcastd";   // the daemon binary
  uint16_t data_port = 7701;
  std::vector<std::string> extra_args;   // passed to every daemon
  // Every daemon serves TLS (control and data) with a certificate from a fresh cluster CA in
  // STATE/pki, which the cluster file names (tls_ca).
  bool tls = false;
};

// Starts one gridcastd per node inside its namespace and waits until each listens. Writes
// STATE/cluster.yaml (a fresh secret, STATE/topology.yaml, control on unix sockets in
// STATE/run so the host reaches every daemon, data on the node's address; with options.tls
// the CA it names), data directories
// STATE/data/NODE, logs STATE/logs/NODE.log; every daemon may send from STATE/payloads.
// Returns the cluster file's path. The daemons stop with NetgridDown().
Result<std::string> StartNetgridDaemons(const NetworkModel& model, const NetgridState& state,
                                        const std::filesystem::path& state_dir,
                                        const NetgridDaemonOptions& options);

// argv that runs `command` inside node's namespace ("ip netns exec NS command...").
std::vector<std::string> NetgridExecArgv(const NetgridNode& node,
                                         const std::vector<std::string>& command);

}  // namespace gridcast
