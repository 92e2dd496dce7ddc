#include "client/cli/netgrid_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "client/cli/cli_util.h"
#include "common/units.h"
#include "deploy/netgrid.h"

namespace gridcast::cli {
namespace {

struct NetgridArgs {
  std::string topology;
  std::string state = DefaultNetgridStateDir().string();
  bool json = false;
  bool daemons = false;
  bool tls = false;
  std::vector<std::string> daemon_args;
  std::string node;
  std::vector<std::string> command;
};

int Up(const NetgridArgs& args) {
  if (args.tls && !args.daemons) return ReportError(Status::InvalidArgument("--tls needs --daemons"));
  Result<NetworkModel> model = LoadTopology(args.topology);
  if (!model.ok()) return ReportError(model.status());
  Result<NetgridState> state = NetgridUp(*model, args.state);
  if (!state.ok()) return ReportError(state.status());
  fmt::print("netgrid '{}' is up: {} nodes, {} switches (state {})\n", state->topology_name,
             state->nodes.size(), state->switch_netns.size(), args.state);
  for (const Node& node : model->nodes) {
    const NetgridNode* entry = state->FindNode(node.name);
    fmt::print("  {:<16} {:<15} switch {:<10} up {:<10} down {}\n", node.name, entry->address,
               entry->switch_name, FormatRate(node.up_bps), FormatRate(node.down_bps));
  }
  for (const Switch& sw : model->switches) {
    if (sw.parent < 0) continue;
    fmt::print("  uplink {} -> {}: up {} down {}\n", sw.name, model->switches[sw.parent].name,
               FormatRate(sw.uplink_up_bps), FormatRate(sw.uplink_down_bps));
  }
  for (const std::string& note : state->notes) fmt::print("  note: {}\n", note);
  if (!args.daemons) return kExitOk;
  NetgridDaemonOptions options;
  options.gridcastd = ProgramBesideSelf("gridcastd");
  options.extra_args = args.daemon_args;
  options.tls = args.tls;
  Result<std::string> cluster = StartNetgridDaemons(*model, *state, args.state, options);
  if (!cluster.ok()) {
    (void)NetgridDown(args.state);
    return ReportError(cluster.status().WithContext("netgrid up --daemons (rolled back)"));
  }
  fmt::print("  {} gridcastd daemons running{}; cluster file {}\n", state->nodes.size(),
             args.tls ? " (TLS, CA " + (std::filesystem::absolute(args.state) / "pki" / "ca.pem").string() + ")" : "",
             *cluster);
  return kExitOk;
}

int Down(const NetgridArgs& args) {
  Status status = NetgridDown(args.state);
  if (!status.ok()) return ReportError(status);
  fmt::print("netgrid down (state {})\n", args.state);
  return kExitOk;
}

int List(const NetgridArgs& args) {
  Result<NetgridState> state = LoadNetgridState(args.state);
  if (!state.ok()) return ReportError(state.status());
  if (args.json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const NetgridNode& node : state->nodes) {
      nodes.push_back({{"node", node.name}, {"netns", node.netns}, {"ip", node.address},
                       {"switch", node.switch_name}});
    }
    fmt::print("{}\n", nlohmann::json{{"topology", state->topology_name}, {"nodes", nodes}}.dump(2));
    return kExitOk;
  }
  fmt::print("{:<16} {:<28} {:<15} {}\n", "NODE", "NAMESPACE", "IP", "SWITCH");
  for (const NetgridNode& node : state->nodes) {
    fmt::print("{:<16} {:<28} {:<15} {}\n", node.name, node.netns, node.address, node.switch_name);
  }
  return kExitOk;
}

int Exec(const NetgridArgs& args) {
  Result<NetgridState> state = LoadNetgridState(args.state);
  if (!state.ok()) return ReportError(state.status());
  const NetgridNode* node = state->FindNode(args.node);
  if (node == nullptr) {
    return ReportError(Status::InvalidArgument("unknown node '" + args.node + "'"));
  }
  std::vector<std::string> argv = NetgridExecArgv(*node, args.command);
  std::vector<char*> raw;
  for (std::string& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  execvp(raw[0], raw.data());
  return ReportError(Status::FailedPrecondition("cannot run ip netns exec"));
}

}  // namespace

void AddNetgridCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<NetgridArgs>();
  CLI::App* netgrid = app.add_subcommand(
      "netgrid", "An emulated multi-site network on this host (network namespaces, needs root)");
  netgrid->require_subcommand(1);

  CLI::App* up = netgrid->add_subcommand("up", "Build the network of a topology file");
  up->add_option("topology", args->topology, "Topology YAML file")->required();
  up->add_option("--state", args->state, "State directory (one per netgrid)");
  up->add_flag("--daemons", args->daemons, "Start a gridcastd per node; writes STATE/cluster.yaml");
  up->add_flag("--tls", args->tls,
               "With --daemons: TLS on control and data, certificates from a fresh cluster CA in STATE/pki");
  up->add_option("--daemon-arg", args->daemon_args, "Extra argument for every gridcastd (repeatable)")
      ->allow_extra_args(false);
  up->callback([args, exit_code] { *exit_code = Up(*args); });

  CLI::App* down = netgrid->add_subcommand("down", "Remove everything netgrid up made");
  down->add_option("--state", args->state, "State directory");
  down->callback([args, exit_code] { *exit_code = Down(*args); });

  CLI::App* list = netgrid->add_subcommand("list", "Show node -> namespace, IP");
  list->add_option("--state", args->state, "State directory");
  list->add_flag("--json", args->json, "Print JSON");
  list->callback([args, exit_code] { *exit_code = List(*args); });

  CLI::App* exec = netgrid->add_subcommand("exec", "Run a command inside a node's namespace");
  exec->add_option("--state", args->state, "State directory");
  exec->add_option("node", args->node, "Node name")->required();
  exec->add_option("command", args->command, "Command and arguments (after --)")->required();
  exec->callback([args, exit_code] { *exit_code = Exec(*args); });
}

}  // namespace gridcast::cli
