#include "deploy/mpi_launch.h"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// Every netgrid node's interface (deploy/netgrid_layout.h).
constexpr const char* kNetgridInterface = "eth0";

Status WriteFile(const fs::path& path, const std::string& text, fs::perms perms) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::Internal("cannot write " + path.string());
  }
  std::error_code ec;
  fs::permissions(path, perms, ec);
  if (ec) return Status::Internal("cannot chmod " + path.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& OpenMpiAlgorithms(MpiCollective collective) {
  static const std::vector<std::string> bcast = {
      "basic_linear", "chain",    "pipeline", "split_binary_tree", "binary_tree",
      "binomial",     "knomial",  "scatter_allgather", "scatter_allgather_ring"};
  static const std::vector<std::string> allgather = {"linear", "bruck", "recursive_doubling", "ring",
                                                     "neighbor", "two_proc"};
  return collective == MpiCollective::kBcast ? bcast : allgather;
}

std::string RshAgentScript(const NetgridState& state, const std::string& tmp_base) {
  // Node names and addresses are from a safe alphabet (collectives/topology.h), so they need
  // no quoting inside the case patterns.
  std::string script =
      "#!/bin/sh\n"
      "# plm_rsh_agent for Open MPI on netgrid '" + state.topology_name + "' (written by gridcast bench):\n"
      "# \"agent HOST command...\" runs the command inside HOST's network namespace.\n"
      "tmp_base='" + tmp_base + "'\n"
      "host=\"$1\"\n"
      "shift\n"
      "case \"$host\" in\n";
  for (const NetgridNode& node : state.nodes) {
    script += fmt::format("  {}|{}) netns={} node={} ;;\n", node.address, node.name, node.netns, node.name);
  }
  script +=
      "  *) echo \"netgrid agent: unknown host '$host'\" >&2; exit 1 ;;\n"
      "esac\n"
      "exec ip netns exec \"$netns\" env TMPDIR=\"$tmp_base/$node\" sh -c \"$*\"\n";
  return script;
}

std::vector<std::string> MpiNodeOrder(const NetgridState& state, const std::string& source) {
  std::vector<std::string> order;
  if (state.FindNode(source) != nullptr) order.push_back(source);
  for (const NetgridNode& node : state.nodes) {
    if (node.name != source) order.push_back(node.name);
  }
  return order;
}

std::map<std::string, double> MpiSecondsByNode(const std::vector<double>& by_rank,
                                               const std::vector<std::string>& node_order) {
  std::map<std::string, double> by_node;
  for (size_t rank = 0; rank < by_rank.size(); ++rank) by_node[node_order[rank % node_order.size()]] += by_rank[rank];
  return by_node;
}

std::string MpiHostfile(const NetgridState& state, const std::string& source, int ranks_per_node) {
  std::string hostfile;
  for (const std::string& name : MpiNodeOrder(state, source)) {
    hostfile += fmt::format("{} slots={}\n", state.FindNode(name)->address, ranks_per_node);
  }
  return hostfile;
}

std::vector<std::string> MpirunArgv(const NetgridState& state, const std::string& source,
                                    const std::string& tmp_base, const fs::path& agent,
                                    const fs::path& hostfile, const MpiRun& run) {
  const NetgridNode* root = state.FindNode(source);
  std::vector<std::string> argv = {
      "timeout", "-k", "10", fmt::format("{:.0f}", run.timeout_s),
      "ip", "netns", "exec", root != nullptr ? root->netns : source,
      "env", "TMPDIR=" + tmp_base + "/" + source,
      "mpirun", "--allow-run-as-root", "--hostfile", hostfile.string(),
      "-np", std::to_string(state.nodes.size() * static_cast<size_t>(run.ranks_per_node)), "--map-by", "node",
      "--mca", "plm_rsh_agent", agent.string(),
      "--mca", "pml", "ob1",
      // Ranks share this host's few cores: polling ranks that yield let the busy ones run.
      "--mca", "mpi_yield_when_idle", "1",
      "--mca", "btl", "self,tcp",
      "--mca", "btl_tcp_if_include", kNetgridInterface,
      "--mca", "oob_tcp_if_include", kNetgridInterface};
  for (const auto& [name, value] : run.mca) argv.insert(argv.end(), {"--mca", name, value});
  for (const std::string& variable : run.environment) argv.insert(argv.end(), {"-x", variable});
  argv.insert(argv.end(), run.command.begin(), run.command.end());
  return argv;
}

MpiRun MpiCollectiveRun(const MpiCollectiveOptions& options) {
  MpiRun run;
  run.command = {options.program, std::to_string(options.size_bytes)};
  run.environment = options.environment;
  run.ranks_per_node = options.ranks_per_node;
  run.timeout_s = options.timeout_s;
  if (!options.tuned_algorithm.empty()) {
    const std::string prefix =
        options.collective == MpiCollective::kBcast ? "coll_tuned_bcast_algorithm" : "coll_tuned_allgather_algorithm";
    run.mca = {{"coll_tuned_use_dynamic_rules", "1"}, {prefix, options.tuned_algorithm}};
    if (options.collective == MpiCollective::kBcast) {
      run.mca.emplace_back(prefix + "_segmentsize", std::to_string(options.segment_bytes));
    }
  }
  return run;
}

Result<MpiCollectiveResult> ParseMpiCollectiveOutput(std::string_view output) {
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("{\"completion_s\"", 0) != 0) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      MpiCollectiveResult result{j.at("completion_s").get<double>(), j.at("verified").get<bool>(),
                                 j.at("ranks").get<int>(), j.at("cpu_s").get<std::vector<double>>(),
                                 j.value("thread_cpu_s", std::vector<double>{}),
                                 j.at("buffer_cpu_s").get<std::vector<double>>(), {}};
      if (result.cpu_s.size() != static_cast<size_t>(result.ranks) ||
          result.buffer_cpu_s.size() != static_cast<size_t>(result.ranks) ||
          (!result.thread_cpu_s.empty() && result.thread_cpu_s.size() != static_cast<size_t>(result.ranks))) {
        return Status::Internal("the MPI program printed " + std::to_string(result.cpu_s.size()) + ", " +
                                std::to_string(result.thread_cpu_s.size()) + " (main threads) and " +
                                std::to_string(result.buffer_cpu_s.size()) + " CPU times for " +
                                std::to_string(result.ranks) + " ranks: '" + line + "'");
      }
      const std::chrono::duration<double> timed_from_s(j.at("timed_from_unix_s").get<double>());
      result.timed_from = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(timed_from_s));
      return result;
    } catch (const nlohmann::json::exception& e) {
      return Status::Internal("the MPI program printed a bad result line '" + line + "': " + e.what());
    }
  }
  return Status::Internal("the MPI program printed no result");
}

Result<std::string> RunMpiProgram(const NetgridState& state, const std::string& source,
                                  const fs::path& work_dir, const MpiRun& run) {
  if (state.FindNode(source) == nullptr) return Status::InvalidArgument("unknown source '" + source + "'");
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) return Status::Internal("cannot create " + work_dir.string() + ": " + ec.message());
  const std::string tmp_base = fs::absolute(work_dir / "tmp").string();
  if (tmp_base.find('\'') != std::string::npos) {
    return Status::InvalidArgument("the state directory's path may not contain a single quote");
  }
  for (const NetgridNode& node : state.nodes) {
    fs::create_directories(fs::path(tmp_base) / node.name, ec);
    if (ec) return Status::Internal("cannot create " + tmp_base + "/" + node.name + ": " + ec.message());
  }
  const fs::path agent = fs::absolute(work_dir / "netgrid-agent.sh");
  const fs::path hostfile = fs::absolute(work_dir / "hostfile");
  GRIDCAST_RETURN_IF_ERROR(WriteFile(agent, RshAgentScript(state, tmp_base), fs::perms::owner_all));
  GRIDCAST_RETURN_IF_ERROR(
      WriteFile(hostfile, MpiHostfile(state, source, run.ranks_per_node), fs::perms::owner_read | fs::perms::owner_write));
  const std::vector<std::string> argv = MpirunArgv(state, source, tmp_base, agent, hostfile, run);
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv));
  std::ofstream(work_dir / "mpirun.log") << JoinCommand(argv) << "\n" << out.output;
  if (out.exit_code != 0) {
    return Status::Internal(fmt::format("mpirun failed (exit {}{}): {}", out.exit_code,
                                        out.exit_code == 124 ? ", timed out" : "", out.output));
  }
  return out.output;
}

Result<MpiCollectiveResult> RunMpiCollective(const NetgridState& state, const std::string& source,
                                   const fs::path& work_dir, const MpiCollectiveOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(std::string output, RunMpiProgram(state, source, work_dir, MpiCollectiveRun(options)));
  Result<MpiCollectiveResult> result = ParseMpiCollectiveOutput(output);
  if (!result.ok()) return result.status().WithContext(output);
  return result;
}

}  // namespace gridcast
