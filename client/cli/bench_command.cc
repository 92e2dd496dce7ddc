#include "client/cli/bench_command.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "client/cli/bench_modes.h"
#include "client/cli/cli_util.h"
#include "cluster/control_client.h"
#include "collectives/bound.h"
#include "collectives/registry.h"
#include "common/crypto.h"
#include "common/hex.h"
#include "common/splitmix64.h"
#include "common/units.h"
#include "deploy/bench_netgrid.h"
#include "deploy/daemon_cpu_meter.h"
#include "deploy/iperf_probe.h"
#include "deploy/mpi_launch.h"
#include "deploy/netgrid_layout.h"
#include "deploy/p2p_schedule.h"
#include "deploy/subprocess.h"
#include "tomography/clustering.h"
#include "tomography/inferred_topology.h"
#include "tomography/partition_compare.h"

namespace gridcast::cli {

namespace fs = std::filesystem;

Result<Digest> WriteRandomPayload(const fs::path& path, uint64_t size_bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Internal("cannot create " + path.string());
  uint64_t seed = 0;
  RandomBytes({reinterpret_cast<uint8_t*>(&seed), sizeof seed});
  SplitMix64 generator(seed);
  std::vector<uint8_t> block(1 << 20);
  Sha256Stream sha;
  for (uint64_t written = 0; written < size_bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size_bytes - written, block.size()));
    FillPseudoRandom({block.data(), n}, generator);
    out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(n));
    sha.Update({block.data(), n});
    written += n;
  }
  if (!out.flush()) return Status::Internal("cannot write " + path.string() + " (disk full?)");
  return sha.Finish();
}

Result<Digest> FileSha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("no " + path.string());
  std::vector<char> block(1 << 20);
  Sha256Stream sha;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    sha.Update({reinterpret_cast<const uint8_t*>(block.data()), static_cast<size_t>(in.gcount())});
  }
  if (in.bad()) return Status::Internal("cannot read " + path.string());
  return sha.Finish();
}

void RecordCopies(const std::vector<std::pair<std::string, Result<Digest>>>& copies, const Digest& digest,
                  const std::string& whose, BenchOutcome* outcome) {
  int copies_ok = 0;
  for (const auto& [node, copy] : copies) {
    if (copy.ok() && *copy == digest) {
      ++copies_ok;
    } else {
      outcome->verified = false;
      outcome->details.push_back(node + ": " + (copy.ok() ? "copy differs from the payload" : copy.status().message()));
    }
  }
  outcome->details.push_back(fmt::format("{} of {} {} hash to the payload's SHA-256 {}", copies_ok, copies.size(),
                                         whose, ToHex(digest).substr(0, 16)));
}

Result<nlohmann::json> ParseSendJson(const CommandOutput& out) {
  const size_t begin = out.output.find('{');
  const size_t end = out.output.rfind('}');
  if (begin != std::string::npos && end != std::string::npos && end > begin) {
    nlohmann::json j = nlohmann::json::parse(out.output.substr(begin, end - begin + 1), nullptr, false);
    if (!j.is_discarded()) return j;
  }
  return Status::Internal(fmt::format("gridcast printed no summary (exit {}): {}", out.exit_code, out.output));
}

std::vector<std::string> NodeNames(const NetworkModel& model, const std::string& except) {
  std::vector<std::string> names;
  for (const Node& node : model.nodes) {
    if (node.name != except) names.push_back(node.name);
  }
  return names;
}

namespace {

std::vector<NodeCpu> NodeCpuOf(const Result<std::map<std::string, double>>& cpu_s,
                               const std::vector<std::string>& receivers, uint64_t received_bytes,
                               const std::string& field, BenchOutcome* outcome) {
  if (!cpu_s.ok()) {
    outcome->details.push_back("no " + field + ": " + cpu_s.status().message());
    return {};
  }
  std::vector<NodeCpu> measured;
  for (const std::string& node : receivers) {
    const auto found = cpu_s->find(node);
    if (found == cpu_s->end()) {
      outcome->details.push_back("no " + field + ": no CPU time of " + node);
      return {};
    }
    measured.push_back({node, found->second, received_bytes});
  }
  return measured;
}

}  // namespace

void RecordNodeCpu(const Result<std::map<std::string, double>>& cpu_s,
                   const std::optional<std::map<std::string, double>>& transfer_cpu_s,
                   const std::vector<std::string>& receivers, uint64_t received_bytes, const std::string& of,
                   BenchOutcome* outcome) {
  outcome->node_cpu = NodeCpuOf(cpu_s, receivers, received_bytes, "cpu_s_per_gib", outcome);
  outcome->transfer_cpu.clear();
  if (transfer_cpu_s) {
    outcome->transfer_cpu = NodeCpuOf(*transfer_cpu_s, receivers, received_bytes, "transfer_cpu_s_per_gib", outcome);
  }
  outcome->cpu_of = of;
}

void RecordBusiestThreads(const std::map<std::string, double>& busiest_s, const std::vector<std::string>& receivers,
                          uint64_t received_bytes, BenchOutcome* outcome) {
  outcome->busiest_thread = NodeCpuOf(busiest_s, receivers, received_bytes, "busiest_thread_cpu_s_per_gib", outcome);
}

namespace {

// Each node's busiest rank main thread: with more than one rank per node, the one that used most.
std::map<std::string, double> RankThreadsByNode(const std::vector<double>& by_rank,
                                                const std::vector<std::string>& node_order) {
  std::map<std::string, double> by_node;
  for (size_t rank = 0; rank < by_rank.size(); ++rank) {
    double& node_s = by_node[node_order[rank % node_order.size()]];
    node_s = std::max(node_s, by_rank[rank]);
  }
  return by_node;
}

}  // namespace

void RecordMpiRankCpu(const MpiCollectiveResult& result, const std::vector<std::string>& node_order,
                      const std::vector<std::string>& receivers, uint64_t received_bytes, BenchOutcome* outcome) {
  const std::map<std::string, double> timed = MpiSecondsByNode(result.cpu_s, node_order);
  std::map<std::string, double> whole = timed;
  for (const auto& [node, buffer_s] : MpiSecondsByNode(result.buffer_cpu_s, node_order)) whole[node] += buffer_s;
  RecordNodeCpu(whole, timed, receivers, received_bytes, "MPI rank", outcome);
  if (!result.thread_cpu_s.empty()) {
    RecordBusiestThreads(RankThreadsByNode(result.thread_cpu_s, node_order), receivers, received_bytes, outcome);
  }
}

std::optional<std::chrono::system_clock::time_point> FirstByteAt(const nlohmann::json& summary,
                                                                 std::chrono::system_clock::time_point requested) {
  if (!summary.contains("control")) return std::nullopt;
  const nlohmann::json& control = summary["control"];
  if (!control.contains("first_byte_s") || !control["first_byte_s"].is_number()) return std::nullopt;
  return requested + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                         std::chrono::duration<double>(control["first_byte_s"].get<double>()));
}

Result<fs::path> MemoryDirOf(const BenchNetgrid& netgrid, const std::string& member) {
  GRIDCAST_ASSIGN_OR_RETURN(ClusterConfig cluster, LoadCluster(netgrid.cluster_file()));
  const ClusterMember* entry = cluster.Find(member);
  if (entry == nullptr) return Status::Internal(member + " is not in " + netgrid.cluster_file());
  ControlClient client(entry->control_address, cluster.secret, {cluster.tls_ca_path});
  v1::ListResponse list;
  GRIDCAST_RETURN_IF_ERROR(client.List(&list).WithContext(member));
  return fs::path(list.memory_dir());
}

namespace {

// The program bench/mpi_bcast.c builds to (only when CMake found MPI).
constexpr const char* kMpiBcastProgram = "gridcast-mpi-bcast";
constexpr const char* kMpiTunedDefault = "pipeline";
constexpr const char* kMpiShimLibrary = "libgridcast-mpi.so";

// `auto` once the registry has it; before that the planner auto would pick on these networks.
std::string DefaultPushAlgorithm(const NetworkModel& model) {
  if (MakePlanner("auto").ok()) return "auto";
  int switches_with_nodes = 0;
  for (size_t s = 0; s < model.switches.size(); ++s) {
    switches_with_nodes += std::any_of(model.nodes.begin(), model.nodes.end(),
                                       [&](const Node& node) { return node.switch_index == static_cast<int>(s); });
  }
  return switches_with_nodes > 1 ? "multilane-sites" : "multilane";
}

// Payloads received by the nodes under each non-root switch from nodes outside it: how many
// copies crossed that switch's uplink downwards, counted from a pull broadcast's observations.
std::map<std::string, double> UplinkCopies(const NetworkModel& model, const nlohmann::json& observations,
                                           uint64_t size_bytes) {
  std::map<std::string, double> copies;
  for (size_t s = 1; s < model.switches.size(); ++s) {
    uint64_t crossing = 0;
    auto under = [&](const std::string& name) {
      const std::optional<int> node = model.FindNode(name);
      return node && model.IsInSubtree(model.nodes[*node].switch_index, static_cast<int>(s));
    };
    for (const auto& pair : observations.at("pairs")) {
      if (under(pair.at("to").get<std::string>()) && !under(pair.at("from").get<std::string>())) {
        crossing += pair.at("bytes").get<uint64_t>();
      }
    }
    copies[model.switches[s].name] = double(crossing) / double(size_bytes);
  }
  return copies;
}

// The `count` members with the most children in the plan `gridcast plan` makes for these
// arguments (the daemons' planner is deterministic and gets the same inputs), never the source.
Result<std::vector<std::string>> InteriorMembers(const BenchContext& ctx, const std::string& algo, int count) {
  std::vector<std::string> argv = {ProgramBesideSelf("gridcast"), "plan", "--topology", ctx.args.topology, "--algo",
                                   algo, "--size", std::to_string(ctx.size_bytes), "--json"};
  if (!ctx.args.chunk.empty()) argv.insert(argv.end(), {"--chunk", ctx.args.chunk});
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv));
  const nlohmann::json plan = nlohmann::json::parse(out.output, nullptr, false);
  if (out.exit_code != 0 || plan.is_discarded()) return Status::Internal("gridcast plan failed: " + out.output);
  std::map<std::string, int> children;
  for (const auto& lane : plan.at("lanes")) {
    for (const auto& edge : lane.at("edges")) children[edge.at("parent").get<std::string>()] += int(edge.at("children").size());
  }
  children.erase(ctx.model.nodes[ctx.model.source].name);
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [name, n] : children) ranked.emplace_back(-n, name);
  std::sort(ranked.begin(), ranked.end());
  if (static_cast<int>(ranked.size()) < count) return Status::InvalidArgument("--kill: the plan has fewer interior members");
  std::vector<std::string> victims;
  for (int i = 0; i < count; ++i) victims.push_back(ranked[i].second);
  return victims;
}

// --kill: what the simulator predicts of the plan patched around the victims (`gridcast
// simulate --fail`: the planner and inputs the daemons had, as in InteriorMembers, at the
// send's chunk size), killed when the bench killed them and patched when the source first
// repaired around one of them. Rates count payload as TCP carries it on the netgrid (1448 of
// every 1514 bytes on the wire). NotFound when no repair was made around a victim.
Result<double> PatchedPrediction(const BenchContext& ctx, const std::string& algo, uint64_t chunk_bytes,
                                 const std::vector<std::string>& victims, const nlohmann::json& repairs) {
  const double kill_s = ctx.args.kill_at * BroadcastBoundSeconds(ctx.model, ctx.model.source, {}, ctx.size_bytes);
  std::optional<double> repaired_s;
  for (const auto& repair : repairs) {
    const std::string member = repair.at("member").get<std::string>();
    if (std::find(victims.begin(), victims.end(), member) == victims.end()) continue;
    repaired_s = std::min(repaired_s.value_or(repair.at("at_s").get<double>()), repair.at("at_s").get<double>());
  }
  if (!repaired_s) return Status::NotFound("no repair around a killed member");
  std::vector<std::string> argv = {ProgramBesideSelf("gridcast"), "simulate", "--topology", ctx.args.topology,
                                   "--algo", algo, "--size", std::to_string(ctx.size_bytes), "--chunk",
                                   std::to_string(chunk_bytes), "--detect", fmt::format("{}", std::max(0.0, *repaired_s - kill_s)),
                                   "--goodput", fmt::format("{}", 1448.0 / 1514.0), "--json"};
  for (const std::string& victim : victims) argv.push_back(fmt::format("--fail={}@{}", victim, ctx.args.kill_at));
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv));
  const nlohmann::json predicted = nlohmann::json::parse(out.output, nullptr, false);
  if (out.exit_code != 0 || predicted.is_discarded() || !predicted.contains("repaired_s")) {
    return Status::Internal("gridcast simulate --fail failed: " + out.output);
  }
  return predicted["repaired_s"].get<double>();
}

// The `gridcast send` RunDaemonBroadcast times, with the bench's options.
std::vector<std::string> SendCommand(const BenchContext& ctx, PlanMode send_mode, const std::string& algo,
                                     const fs::path& payload, const std::string& cluster_file,
                                     const fs::path& observations) {
  std::vector<std::string> argv = {ProgramBesideSelf("gridcast"), "send", payload.string(), "--cluster",
                                   cluster_file, "--algo", algo, "--json"};
  if (!ctx.args.chunk.empty()) argv.insert(argv.end(), {"--chunk", ctx.args.chunk});
  if (ctx.args.in_memory) argv.push_back("--in-memory");
  if (!ctx.args.digest.empty()) argv.insert(argv.end(), {"--digest", ctx.args.digest});
  if (ctx.args.no_reuse) argv.push_back("--no-reuse");
  if (ModeHasSwarm(send_mode)) {
    argv.insert(argv.end(), {"--mode", PlanModeName(send_mode), "--observations", observations.string()});
  }
  return argv;
}

// What `gridcast send --json` said of a broadcast RunDaemonBroadcast timed, into `outcome`;
// `victims` were killed on purpose, and `observations` is where the send wrote its own.
Status ReadSendSummary(const nlohmann::json& summary, int exit_code, const BenchContext& ctx, PlanMode send_mode,
                       const std::vector<std::string>& victims, const fs::path& observations, BenchOutcome* outcome) {
  try {
    outcome->algo = summary.at("algorithm").get<std::string>();
    outcome->completion_s = summary.at("completion_s").get<double>();
    if (summary.contains("transfer_s")) outcome->transfer_s = summary["transfer_s"].get<double>();
    outcome->verified = summary.at("verified").get<bool>() && exit_code == 0;
    for (const auto& m : summary.at("members")) {
      if (m.contains("finished_s")) outcome->finished_s[m.at("name").get<std::string>()] = m["finished_s"].get<double>();
    }
    if (!victims.empty()) {
      // The victims are lost by design; every survivor must hold a verified copy.
      outcome->verified = true;
      for (const auto& m : summary.at("members")) {
        const std::string name = m.at("name").get<std::string>();
        const bool victim = std::find(victims.begin(), victims.end(), name) != victims.end();
        outcome->verified = outcome->verified && (victim || m.at("digest_ok").get<bool>());
      }
      outcome->details.push_back(fmt::format("killed {} after {:.0f}% of the bound", fmt::join(victims, ", "),
                                            100 * ctx.args.kill_at));
    }
    if (summary.contains("control")) outcome->control = summary["control"];
    if (summary.contains("origin")) outcome->origin = BenchOutcome::Origin{0, 0, 0, summary["origin"]};
    if (summary.contains("repairs")) {
      outcome->repairs = summary["repairs"];
      for (const auto& repair : outcome->repairs) {
        outcome->details.push_back(fmt::format("repaired around {} ({}) at {:.1f} s: {} children moved",
                                              repair.at("member").get<std::string>(),
                                              repair.at("reason").get<std::string>(), repair.at("at_s").get<double>(),
                                              repair.at("children_moved").get<int>()));
      }
    }
    outcome->size_bytes = summary.at("size_bytes").get<uint64_t>();
    if (summary.contains("moved_bytes")) {
      const uint64_t copies = summary.at("size_bytes").get<uint64_t>() * summary.at("members").size();
      outcome->details.push_back(fmt::format(
          "moved {} over the network ({:.2f}% of the copies), {} reused from earlier copies",
          FormatSize(summary["moved_bytes"].get<uint64_t>()),
          copies > 0 ? 100.0 * summary["moved_bytes"].get<double>() / double(copies) : 0.0,
          FormatSize(summary.at("reused_bytes").get<uint64_t>())));
    }
    if (summary.contains("digest")) outcome->digest = summary["digest"].get<std::string>();
    if (summary.contains("moved_bytes")) outcome->moved_bytes = summary["moved_bytes"].get<uint64_t>();
    if (summary.contains("reused_bytes")) outcome->reused_bytes = summary["reused_bytes"].get<uint64_t>();
    if (summary.contains("error")) outcome->details.push_back("send error: " + summary["error"].get<std::string>());
    outcome->chunk_bytes = summary.at("chunk_bytes").get<uint64_t>();
    outcome->details.push_back(fmt::format("chunks of {}, {} lane(s)", FormatSize(outcome->chunk_bytes),
                                          summary.at("lanes").get<uint32_t>()));
    if (ModeHasSwarm(send_mode) && outcome->verified) {
      outcome->source_copies = summary.at("source_copies").get<double>();
      outcome->details.push_back(fmt::format("the source uploaded {:.3f} copies", *outcome->source_copies));
      std::ifstream in(observations);
      const nlohmann::json seen = nlohmann::json::parse(in, nullptr, false);
      if (seen.is_discarded()) return Status::Internal("unreadable observations " + observations.string());
      outcome->uplink_copies = UplinkCopies(ctx.model, seen, ctx.size_bytes);
      for (const auto& [name, copies] : outcome->uplink_copies) {
        outcome->details.push_back(fmt::format("{:.3f} copies entered {} over its uplink", copies, name));
      }
      if (!ctx.args.observations.empty()) fs::copy_file(observations, ctx.args.observations, fs::copy_options::overwrite_existing);
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal(std::string("unexpected gridcast send summary: ") + e.what());
  }
  return Status::Ok();
}

// The digest of a directory's tree: its files' relative paths and SHA-256s, in sorted order.
Result<Digest> TreeSha256(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), dir));
  }
  if (ec) return Status::NotFound("cannot read " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  Sha256Stream tree;
  for (const fs::path& file : files) {
    GRIDCAST_ASSIGN_OR_RETURN(const Digest digest, FileSha256(dir / file));
    tree.Update(AsBytes(file.string() + '\0'));
    tree.Update(digest);
  }
  return tree.Finish();
}

// The payload's digest as CheckCopies compares it: a file's SHA-256, or TreeSha256.
Result<Digest> PayloadSha256(const fs::path& path) {
  return fs::is_directory(path) ? TreeSha256(path) : FileSha256(path);
}

// Every receiver's copy of `name` hashed again here (the daemons' digests agreed; this checks
// the stored bytes independently), but the killed `victims`.
Status CheckCopies(const BenchContext& ctx, const BenchNetgrid& netgrid, const std::string& name, const Digest& digest,
                   const std::vector<std::string>& victims, BenchOutcome* outcome) {
  const std::string& source = ctx.model.nodes[ctx.model.source].name;
  std::vector<std::pair<std::string, Result<Digest>>> copies;
  for (const Node& node : ctx.model.nodes) {
    if (node.name == source || std::find(victims.begin(), victims.end(), node.name) != victims.end()) continue;
    fs::path dir = ctx.state_dir / "data" / node.name;
    if (ctx.args.in_memory) {
      GRIDCAST_ASSIGN_OR_RETURN(dir, MemoryDirOf(netgrid, node.name));
    }
    copies.emplace_back(node.name, PayloadSha256(dir / name));
  }
  RecordCopies(copies, digest, "receivers' files", outcome);
  return Status::Ok();
}

// --slow NAME=RATE: a member of the model (not the source) and a rate.
struct SlowNode {
  int index = 0;
  double rate_bps = 0;
};

Result<std::vector<SlowNode>> ParseSlowNodes(const BenchContext& ctx) {
  std::vector<SlowNode> nodes;
  for (const std::string& spec : ctx.args.slow) {
    const size_t equals = spec.find('=');
    if (equals == std::string::npos) return Status::InvalidArgument("--slow " + spec + ": expected NAME=RATE, e.g. core-5=5mbit");
    const std::string name = spec.substr(0, equals);
    const std::optional<int> node = ctx.model.FindNode(name);
    if (!node) return Status::InvalidArgument("--slow " + spec + ": the topology has no node '" + name + "'");
    if (*node == ctx.model.source) return Status::InvalidArgument("--slow " + spec + ": the source cannot be slowed (nothing stands in for it)");
    GRIDCAST_ASSIGN_OR_RETURN(const double rate_bps, ParseRateBps(spec.substr(equals + 1)));
    if (!(rate_bps > 0) || std::isinf(rate_bps)) return Status::InvalidArgument("--slow " + spec + ": the rate must be positive and finite");
    if (std::any_of(nodes.begin(), nodes.end(), [&](const SlowNode& n) { return n.index == *node; })) {
      return Status::InvalidArgument("--slow " + spec + ": '" + name + "' is slowed twice");
    }
    nodes.push_back({*node, rate_bps});
  }
  return nodes;
}

// --slow's figures from the send's per-member times: the others' completion and bound, and
// each slowed member's time against its NIC's.
void RecordSlowed(const BenchContext& ctx, const std::vector<SlowNode>& slowed, const std::vector<std::string>& victims,
                  BenchOutcome* outcome) {
  const double started_s = outcome->completion_s - outcome->transfer_s.value_or(outcome->completion_s);
  const auto is_slowed = [&](int n) {
    return std::any_of(slowed.begin(), slowed.end(), [&](const SlowNode& s) { return s.index == n; });
  };
  std::vector<int> others;
  double others_done_s = 0;
  for (size_t n = 0; n < ctx.model.nodes.size(); ++n) {
    const std::string& node = ctx.model.nodes[n].name;
    if (is_slowed(static_cast<int>(n)) || std::find(victims.begin(), victims.end(), node) != victims.end()) continue;
    others.push_back(static_cast<int>(n));
    if (auto done = outcome->finished_s.find(node); done != outcome->finished_s.end()) {
      others_done_s = std::max(others_done_s, done->second);
    }
  }
  outcome->others_completion_s = started_s + others_done_s;
  outcome->others_bound_s = BroadcastBoundSeconds(ctx.model, ctx.model.source, others, ctx.size_bytes);
  for (const SlowNode& node : slowed) {
    const std::string& name = ctx.model.nodes[node.index].name;
    const auto done = outcome->finished_s.find(name);
    outcome->slowed.push_back({name, node.rate_bps, done != outcome->finished_s.end() ? started_s + done->second : 0,
                               8.0 * static_cast<double>(ctx.size_bytes) / node.rate_bps});
  }
}

// One `gridcast send` (`argv`) timed on a netgrid whose payload file hashes to `digest`, with
// the receivers' CPU over it (per `cpu_bytes` received each) and every copy checked. With
// --kill, the interior `victims` are killed mid-broadcast and only the survivors count.
Result<BenchOutcome> TimedSend(const BenchContext& ctx, BenchNetgrid& netgrid, PlanMode send_mode,
                               const std::vector<std::string>& argv, const std::vector<std::string>& victims,
                               const std::string& name, const Digest& digest, uint64_t cpu_bytes) {
  const std::string& source = ctx.model.nodes[ctx.model.source].name;
  std::vector<std::string> receivers = NodeNames(ctx.model, source);
  std::erase_if(receivers, [&](const std::string& node) {
    return std::find(victims.begin(), victims.end(), node) != victims.end();
  });
  const fs::path send_log = ctx.state_dir / "send.log";
  const fs::path observations = ctx.state_dir / "observations.json";
  // The receivers' CPU from just before the send to its end: the broadcast, nothing of setting up.
  std::unique_ptr<DaemonCpuMeter> cpu_meter = DaemonCpuMeter::Start(netgrid.state(), receivers);
  fs::remove(send_log);  // the log is appended to: one send's output in it
  const auto requested = std::chrono::system_clock::now();
  GRIDCAST_ASSIGN_OR_RETURN(ChildProcess send, ChildProcess::Start(argv, send_log.string()));
  if (!victims.empty()) {
    const double bound_s = BroadcastBoundSeconds(ctx.model, ctx.model.source, {}, ctx.size_bytes);
    std::this_thread::sleep_for(std::chrono::duration<double>(ctx.args.kill_at * bound_s));
    for (const std::string& victim : victims) SignalNetgridNode(*netgrid.state().FindNode(victim), SIGKILL);
  }
  CommandOutput out;
  out.exit_code = send.Wait();
  const double wall_s = std::chrono::duration<double>(std::chrono::system_clock::now() - requested).count();
  const Result<std::map<std::string, double>> cpu_s = cpu_meter->Stop();
  {
    std::ifstream in(send_log);
    std::stringstream text;
    text << in.rdbuf();
    out.output = text.str();
  }
  GRIDCAST_ASSIGN_OR_RETURN(nlohmann::json summary, ParseSendJson(out));

  BenchOutcome outcome;
  GRIDCAST_RETURN_IF_ERROR(ReadSendSummary(summary, out.exit_code, ctx, send_mode, victims, observations, &outcome));
  outcome.wall_s = wall_s;
  // From a moment a little before the first byte (the command's own start is in it): a member's
  // Prepare may count a little, never its transfer less.
  const auto first_byte = FirstByteAt(summary, requested);
  RecordNodeCpu(cpu_s, first_byte ? std::optional(cpu_meter->From(*first_byte)) : std::nullopt, receivers, cpu_bytes,
                "gridcastd", &outcome);
  if (cpu_s.ok()) RecordBusiestThreads(cpu_meter->BusiestThreads(), receivers, cpu_bytes, &outcome);
  GRIDCAST_RETURN_IF_ERROR(CheckCopies(ctx, netgrid, name, digest, victims, &outcome));
  return outcome;
}

// --base-change KIND: the payload file at `path` changed by KIND's edits (inserted bytes
// fresh), written as a new file under the old name as a user's tool writes one.
Status ChangePayload(const fs::path& path, BaseChange kind) {
  std::vector<uint8_t> base(fs::file_size(path));
  {
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(base.data()), static_cast<std::streamsize>(base.size()))) {
      return Status::Internal("cannot read " + path.string());
    }
  }
  uint64_t seed = 0;
  RandomBytes({reinterpret_cast<uint8_t*>(&seed), sizeof seed});
  const std::vector<uint8_t> changed = ApplyEdits(base, BaseChangeEdits(kind, base.size()), seed);
  const fs::path fresh = path.string() + ".new";
  {
    std::ofstream out(fresh, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(changed.data()), static_cast<std::streamsize>(changed.size()));
    if (!out.flush()) return Status::Internal("cannot write " + fresh.string() + " (disk full?)");
  }
  fs::rename(fresh, path);
  return Status::Ok();
}

std::string TreeFileName(int i) { return fmt::format("d{:02}/f{:04}.bin", i % 32, i); }

// --base-change tree: kTreeFiles random files of SIZE / kTreeFiles bytes in 32 directories.
Status WriteRandomTree(const fs::path& dir, uint64_t size_bytes) {
  for (int i = 0; i < kTreeFiles; ++i) {
    fs::create_directories((dir / TreeFileName(i)).parent_path());
    GRIDCAST_RETURN_IF_ERROR(WriteRandomPayload(dir / TreeFileName(i), size_bytes / kTreeFiles).status());
  }
  return Status::Ok();
}

// ... changed: ten files get 4 KiB rewritten in their middle, two are added, one is removed.
Status ChangeTree(const fs::path& dir, uint64_t size_bytes) {
  const uint64_t file_bytes = size_bytes / kTreeFiles;
  std::vector<uint8_t> fresh(std::min<uint64_t>(4096, file_bytes));
  for (int i = 0; i < 10; ++i) {
    RandomBytes(fresh);
    std::fstream file(dir / TreeFileName(i * kTreeFiles / 10), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>((file_bytes - fresh.size()) / 2));
    file.write(reinterpret_cast<const char*>(fresh.data()), static_cast<std::streamsize>(fresh.size()));
    if (!file.flush()) return Status::Internal("cannot edit " + (dir / TreeFileName(i * kTreeFiles / 10)).string());
  }
  for (int i = 0; i < 2; ++i) {
    GRIDCAST_RETURN_IF_ERROR(WriteRandomPayload(dir / fmt::format("added-{}.bin", i), file_bytes).status());
  }
  std::error_code ec;
  if (!fs::remove(dir / TreeFileName(kTreeFiles / 2 + 5), ec)) return Status::Internal("cannot remove a tree file");
  return Status::Ok();
}

// The page cache emptied (dirty pages written first), so that each timed fetch or send reads
// its file from the disk as the first one did.
Status DropCaches() {
  sync();
  std::ofstream drop("/proc/sys/vm/drop_caches");
  drop << "1\n";
  drop.flush();
  return drop ? Status::Ok() : Status::Internal("cannot write /proc/sys/vm/drop_caches");
}

// --origin-rate RATE: the payload at an HTTP origin (Debian's python3 -m http.server, in a
// namespace of its own behind a link of RATE to the source: PlanOriginLink). Times curl alone
// fetching it on the source, then the broadcast of the local file (`local_argv`), then
// `gridcast send URL` of it under another name; the last is the outcome, with the other two.
Result<BenchOutcome> RunOriginBroadcast(const BenchContext& ctx, BenchNetgrid& netgrid, PlanMode send_mode,
                                        const std::vector<std::string>& local_argv, const fs::path& payload,
                                        const Digest& digest) {
  GRIDCAST_ASSIGN_OR_RETURN(const double rate_bps, ParseRateBps(ctx.args.origin_rate));
  if (!(rate_bps > 0) || std::isinf(rate_bps)) return Status::InvalidArgument("--origin-rate must be positive and finite");
  const OriginLink link = PlanOriginLink(ctx.model, netgrid.state().prefix, rate_bps);
  for (const std::vector<std::string>& command : link.setup_commands) {
    GRIDCAST_ASSIGN_OR_RETURN(CommandOutput made, RunCommand(command));
    if (made.exit_code != 0) {
      return Status::Internal(fmt::format("--origin-rate: {}: {}", fmt::join(command, " "), made.output));
    }
  }
  GRIDCAST_ASSIGN_OR_RETURN(ChildProcess server,
                            ChildProcess::Start({"ip", "netns", "exec", link.netns, "/usr/bin/python3", "-m",
                                                 "http.server", "--bind", link.address, "8080", "--directory",
                                                 payload.parent_path().string()},
                                                (ctx.state_dir / "origin.log").string()));
  const std::string url = "http://" + link.address + ":8080/" + payload.filename().string();
  const NetgridNode& source = *netgrid.state().FindNode(ctx.model.nodes[ctx.model.source].name);
  const auto on_source = [&source](std::vector<std::string> command) { return NetgridExecArgv(source, command); };
  bool listening = false;
  for (int i = 0; i < 100 && !listening; ++i) {
    GRIDCAST_ASSIGN_OR_RETURN(CommandOutput probe,
                              RunCommand(on_source({"curl", "-sf", "-o", "/dev/null", "-r", "0-0", url})));
    listening = probe.exit_code == 0;
    if (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!listening) return Status::Unavailable("the origin (python3 -m http.server) did not answer at " + url);

  BenchOutcome::Origin origin;
  origin.rate_bps = rate_bps;
  GRIDCAST_RETURN_IF_ERROR(DropCaches());
  const fs::path downloaded = ctx.state_dir / "curl-download.bin";
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput curl, RunCommand(on_source({"curl", "-sS", "-o", downloaded.string(), "-w",
                                                                       "%{time_total}", url})));
  std::error_code ec;
  const uint64_t downloaded_bytes = fs::file_size(downloaded, ec);
  fs::remove(downloaded, ec);
  if (curl.exit_code != 0 || downloaded_bytes != ctx.size_bytes) {
    return Status::Internal("curl alone could not fetch " + url + ": " + curl.output);
  }
  origin.download_s = std::stod(curl.output);

  GRIDCAST_RETURN_IF_ERROR(DropCaches());
  GRIDCAST_ASSIGN_OR_RETURN(const BenchOutcome local,
                            TimedSend(ctx, netgrid, send_mode, local_argv, {}, payload.filename().string(), digest,
                                      ctx.size_bytes));
  if (!local.verified) return Status::Internal("the broadcast of the local file failed");
  origin.local_completion_s = local.completion_s;

  const std::string name = "origin-" + payload.filename().string();
  std::vector<std::string> argv = local_argv;
  std::replace(argv.begin(), argv.end(), payload.string(), url);
  argv.insert(argv.end(), {"--name", name});
  GRIDCAST_RETURN_IF_ERROR(DropCaches());
  GRIDCAST_ASSIGN_OR_RETURN(BenchOutcome outcome, TimedSend(ctx, netgrid, send_mode, argv, {}, name, digest, ctx.size_bytes));
  if (outcome.origin) origin.summary = std::move(outcome.origin->summary);
  outcome.origin = std::move(origin);
  return outcome;
}

// gridcastd on every node, a random payload, `gridcast send` (the same binary, so the same
// code path as a user's send), then every receiver's file hashed again here. Modes: push;
// pull (gridcast's striped swarm); pull-default (libtorrent's own settings and piece choice,
// the plain-swarm baseline); hybrid (push with pull repair; with --kill, interior members are
// killed mid-broadcast and only the survivors are timed and checked). With --base-change the
// payload is sent once, changed, and sent again: the second send is the one reported.
Result<BenchOutcome> RunDaemonBroadcast(const BenchContext& ctx, PlanMode send_mode) {
  const BenchMode mode = ctx.args.mode;
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<SlowNode> slowed, ParseSlowNodes(ctx));
  if (!slowed.empty() && !ctx.args.base_change.empty()) {
    return Status::InvalidArgument("--slow and --base-change: one at a time");
  }
  NetgridDaemonOptions daemons;
  daemons.gridcastd = ProgramBesideSelf("gridcastd");
  daemons.extra_args = ctx.args.daemon_args;
  daemons.tls = ctx.args.tls;
  if (mode == BenchMode::kPullDefault) daemons.extra_args.push_back("--bt-defaults");
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, daemons));
  const bool tree = ctx.args.base_change == kTreeChange;
  const std::string name = tree ? kTreeName : kPayloadName;
  const fs::path payload = ctx.state_dir / "payloads" / name;
  if (tree) {
    GRIDCAST_RETURN_IF_ERROR(WriteRandomTree(payload, ctx.size_bytes));
  } else {
    GRIDCAST_RETURN_IF_ERROR(WriteRandomPayload(payload, ctx.size_bytes).status());
  }
  GRIDCAST_ASSIGN_OR_RETURN(const Digest digest, PayloadSha256(payload));

  std::string algo = ctx.args.algo;
  if (algo.empty()) {
    algo = mode == BenchMode::kPull ? "swarm" : mode == BenchMode::kPullDefault ? "swarm-free" : DefaultPushAlgorithm(ctx.model);
  }
  const fs::path observations = ctx.state_dir / "observations.json";
  const std::vector<std::string> argv = SendCommand(ctx, send_mode, algo, payload, netgrid->cluster_file(), observations);
  std::vector<std::string> victims;
  if (ctx.args.kill > 0) {
    if (mode != BenchMode::kHybrid && mode != BenchMode::kPush) {
      return Status::InvalidArgument("--kill needs --mode push or hybrid");
    }
    if (!ctx.args.base_change.empty()) return Status::InvalidArgument("--kill and --base-change: one at a time");
    GRIDCAST_ASSIGN_OR_RETURN(victims, InteriorMembers(ctx, algo, ctx.args.kill));
  }
  for (const SlowNode& node : slowed) {
    for (const std::vector<std::string>& command : SlowNodeCommands(ctx.model, netgrid->state().prefix, node.index, node.rate_bps)) {
      GRIDCAST_ASSIGN_OR_RETURN(CommandOutput shaped, RunCommand(command));
      if (shaped.exit_code != 0) return Status::Internal("--slow: " + fmt::format("{}", fmt::join(command, " ")) + ": " + shaped.output);
    }
  }
  if (!ctx.args.origin_rate.empty()) {
    if (!victims.empty() || !slowed.empty() || !ctx.args.base_change.empty() || tree) {
      return Status::InvalidArgument("--origin-rate: one file, without --kill, --slow or --base-change");
    }
    return RunOriginBroadcast(ctx, *netgrid, send_mode, argv, payload, digest);
  }
  if (ctx.args.base_change.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(BenchOutcome outcome,
                              TimedSend(ctx, *netgrid, send_mode, argv, victims, name, digest, ctx.size_bytes));
    if (!slowed.empty()) RecordSlowed(ctx, slowed, victims, &outcome);
    if (!victims.empty()) {
      std::vector<int> survivors;
      for (size_t n = 0; n < ctx.model.nodes.size(); ++n) {
        const std::string& node = ctx.model.nodes[n].name;
        if (std::find(victims.begin(), victims.end(), node) == victims.end()) survivors.push_back(static_cast<int>(n));
      }
      outcome.survivors_bound_s = BroadcastBoundSeconds(ctx.model, ctx.model.source, survivors, ctx.size_bytes);
      Result<double> patched = PatchedPrediction(ctx, outcome.algo, outcome.chunk_bytes, victims, outcome.repairs);
      if (patched.ok()) {
        outcome.patched_predicted_s = *patched;
      } else {
        outcome.details.push_back("no prediction of a patched plan: " + patched.status().message());
      }
    }
    return outcome;
  }

  GRIDCAST_ASSIGN_OR_RETURN(BenchOutcome base,
                            TimedSend(ctx, *netgrid, send_mode, argv, victims, name, digest, ctx.size_bytes));
  if (!base.verified) return Status::Internal("the base send failed: " + fmt::format("{}", fmt::join(base.details, "; ")));
  if (tree) {
    GRIDCAST_RETURN_IF_ERROR(ChangeTree(payload, ctx.size_bytes));
  } else {
    GRIDCAST_RETURN_IF_ERROR(ChangePayload(payload, *ParseBaseChange(ctx.args.base_change)));
  }
  GRIDCAST_ASSIGN_OR_RETURN(const Digest changed, PayloadSha256(payload));
  // The members' CPU per GiB of the copy they searched.
  GRIDCAST_ASSIGN_OR_RETURN(BenchOutcome outcome,
                            TimedSend(ctx, *netgrid, send_mode, argv, victims, name, changed, ctx.size_bytes));
  outcome.base_completion_s = base.completion_s;
  outcome.base_wall_s = base.wall_s;
  outcome.bound_s = BroadcastBoundSeconds(ctx.model, ctx.model.source, {}, outcome.size_bytes.value_or(ctx.size_bytes));
  outcome.details.push_back(fmt::format(
      "base change {}: the base ({}) took {:.3f} s ({:.3f} s from the request), this send {:.3f} s ({:.3f} s: "
      "{:.3f}x)",
      ctx.args.base_change, FormatSize(ctx.size_bytes), base.completion_s, *base.wall_s, outcome.completion_s,
      *outcome.wall_s, *outcome.wall_s / *base.wall_s));
  return outcome;
}

Result<BenchOutcome> RunMpi(const BenchContext& ctx, bool tuned) {
  const std::string program = ProgramBesideSelf(kMpiBcastProgram);
  if (program == kMpiBcastProgram) {
    return Status::FailedPrecondition(
        "--mode mpi needs the MPI benchmark program, which is built only when CMake finds MPI "
        "(install Open MPI, e.g. libopenmpi-dev, and rebuild)");
  }
  MpiCollectiveOptions options;
  options.program = program;
  options.size_bytes = ctx.size_bytes;
  if (tuned) {
    options.tuned_algorithm = ctx.args.algo.empty() ? kMpiTunedDefault : ctx.args.algo;
    const std::vector<std::string>& known = OpenMpiAlgorithms(MpiCollective::kBcast);
    if (std::find(known.begin(), known.end(), options.tuned_algorithm) == known.end()) {
      return Status::InvalidArgument("--algo for --mode mpi is an Open MPI bcast algorithm: " +
                                     fmt::format("{}", fmt::join(known, ", ")));
    }
    GRIDCAST_ASSIGN_OR_RETURN(options.segment_bytes, ParseSizeBytes(ctx.args.segment));
  } else if (!ctx.args.algo.empty()) {
    return Status::InvalidArgument("--mode mpi-default runs Open MPI's own choice; --algo does not apply");
  }
  const double bound_s = BroadcastBoundSeconds(ctx.model, ctx.model.source, {}, ctx.size_bytes);
  options.timeout_s = 120 + 20 * bound_s;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, std::nullopt));
  const std::string& source = ctx.model.nodes[ctx.model.source].name;
  GRIDCAST_ASSIGN_OR_RETURN(MpiCollectiveResult result,
                            RunMpiCollective(netgrid->state(), source, ctx.state_dir / "mpi", options));
  BenchOutcome outcome;
  outcome.algo = tuned ? fmt::format("ompi-{}:{}", options.tuned_algorithm, FormatSize(options.segment_bytes))
                       : "ompi-default";
  outcome.completion_s = result.completion_s;
  outcome.verified = result.verified && result.ranks == static_cast<int>(ctx.model.nodes.size());
  outcome.details.push_back(fmt::format("{} ranks, one per node, rank 0 on {}; checksums {}", result.ranks, source,
                                        result.verified ? "all equal" : "DIFFER"));
  RecordMpiRankCpu(result, MpiNodeOrder(netgrid->state(), source), NodeNames(ctx.model, source), ctx.size_bytes,
                   &outcome);
  return outcome;
}

// The same bench/mpi_bcast.c (mpi_allgather.c), unmodified, with libgridcast-mpi.so preloaded
// into every rank and a gridcastd per node: MPI_Bcast (MPI_Allgather) as an MPI program gets it
// through the shim (docs/mpi.md).
// Stays whole: the measurement in the order it runs (netgrid, daemons, MPI program, checks, CPU).
Result<BenchOutcome> RunMpiShim(const BenchContext& ctx, MpiCollective collective) {
  const bool bcast = collective == MpiCollective::kBcast;
  const char* const program_name = bcast ? kMpiBcastProgram : kMpiAllgatherProgram;
  const std::string program = ProgramBesideSelf(program_name);
  const std::string shim = LibraryBesideSelf(kMpiShimLibrary);
  if (program == program_name || shim.empty()) {
    return Status::FailedPrecondition(std::string("--mode ") + BenchModeName(ctx.args.mode) + " needs the MPI benchmark program and " +
                                      std::string(kMpiShimLibrary) +
                                      ", which are built only when CMake finds MPI (install libopenmpi-dev and rebuild)");
  }
  NetgridDaemonOptions daemons;
  daemons.gridcastd = ProgramBesideSelf("gridcastd");
  daemons.extra_args = ctx.args.daemon_args;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, daemons));
  MpiCollectiveOptions options;
  options.collective = collective;
  options.program = program;
  options.size_bytes = ctx.size_bytes;
  // Verbose 3: the root says which planner carried each call (so a call MPI kept is seen), and
  // every rank how long each step took.
  // Threshold 1: the bench times the shim's path at any size (finding the threshold is what
  // comparing it with --mode mpi at several sizes is for).
  options.environment = {"LD_PRELOAD=" + shim, "GRIDCAST_CLUSTER=" + netgrid->cluster_file(),
                         "GRIDCAST_MPI_VERBOSE=3", "GRIDCAST_MPI_THRESHOLD=1",
                         std::string(bcast ? "GRIDCAST_MPI_ALGO=" : "GRIDCAST_MPI_ALLGATHER_ALGO=") +
                             (ctx.args.algo.empty() ? "auto" : ctx.args.algo)};
  if (!ctx.args.digest.empty()) options.environment.push_back("GRIDCAST_MPI_DIGEST=" + ctx.args.digest);
  // The shim's other variables (docs/mpi.md) as bench's environment sets them, over the above.
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string setting = *variable;
    if (setting.rfind("GRIDCAST_MPI_", 0) != 0) continue;
    const std::string name = setting.substr(0, setting.find('=') + 1);
    std::erase_if(options.environment, [&](const std::string& set) { return set.rfind(name, 0) == 0; });
    options.environment.push_back(setting);
  }
  options.timeout_s = 120 + 20 * BroadcastBoundSeconds(ctx.model, ctx.model.source, {}, ctx.size_bytes);
  // An allgather has no root: rank 0 on the first node, as --mode mpi-allgather runs it.
  const std::string& source = ctx.model.nodes[bcast ? ctx.model.source : 0].name;
  const std::vector<std::string> receivers = NodeNames(ctx.model, bcast ? source : "");
  // The daemons' CPU from before mpirun to its end (the ranks' start and finish too: the daemons
  // idle then); each rank's own over its timed region.
  std::unique_ptr<DaemonCpuMeter> cpu_meter = DaemonCpuMeter::Start(netgrid->state(), receivers);
  Result<MpiCollectiveResult> ran = RunMpiCollective(netgrid->state(), source, ctx.state_dir / "mpi", options);
  Result<std::map<std::string, double>> cpu_s = cpu_meter->Stop();
  if (!ran.ok()) return ran.status();
  const MpiCollectiveResult& result = *ran;
  const uint64_t received_bytes = bcast ? ctx.size_bytes : AllgatherReceivedBytes(ctx);
  // Each part, for the human output: the ranks' CPU moves with how long they wait (they poll).
  // A rank's whole is its timed region and taking its buffer's memory; its daemon's, the window.
  // Over the timed region: the rank's, and its daemon's from when rank 0's began.
  std::string cpu_parts;
  std::optional<std::map<std::string, double>> transfer_cpu_s;
  if (cpu_s.ok()) {
    const std::vector<std::string> order = MpiNodeOrder(netgrid->state(), source);
    const std::map<std::string, double> rank_timed_s = MpiSecondsByNode(result.cpu_s, order);
    const std::map<std::string, double> rank_buffer_s = MpiSecondsByNode(result.buffer_cpu_s, order);
    transfer_cpu_s = cpu_meter->From(result.timed_from);
    std::vector<NodeCpu> rank_parts, daemon_parts;
    for (const std::string& node : receivers) {
      if (cpu_s->count(node) == 0 || rank_timed_s.count(node) == 0) continue;
      const double rank_s = rank_timed_s.at(node) + rank_buffer_s.at(node);
      daemon_parts.push_back({node, (*cpu_s)[node], received_bytes});
      rank_parts.push_back({node, rank_s, received_bytes});
      (*cpu_s)[node] += rank_s;
      (*transfer_cpu_s)[node] += rank_timed_s.at(node);
    }
    Result<CpuPerGib> of_ranks = SummarizeCpuPerGib(rank_parts);
    Result<CpuPerGib> of_daemons = SummarizeCpuPerGib(daemon_parts);
    if (of_ranks.ok() && of_daemons.ok()) {
      cpu_parts = fmt::format("CPU per GiB received, the ranks' own: median {:.3f} s, max {:.3f} s; the daemons': "
                              "median {:.3f} s, max {:.3f} s",
                              of_ranks->median, of_ranks->max, of_daemons->median, of_daemons->max);
    }
  }
  std::ifstream log(ctx.state_dir / "mpi" / "mpirun.log");
  std::string line;
  std::vector<std::string> carried, steps;
  while (std::getline(log, line)) {
    if (line.find("by gridcast") != std::string::npos) carried.push_back(line);
    if (line.find("steps (s since the call)") != std::string::npos) steps.push_back(line);
  }
  BenchOutcome outcome;
  outcome.algo = BenchModeName(ctx.args.mode);
  if (!bcast) {
    outcome.bound_s = AllgatherBoundOfBench(ctx);
    outcome.part_bytes = AllgatherPartBytes(ctx);
  }
  outcome.completion_s = result.completion_s;
  outcome.verified = result.verified && result.ranks == static_cast<int>(ctx.model.nodes.size()) && !carried.empty();
  outcome.details.push_back(fmt::format("{} ranks, one per node, rank 0 on {}; checksums {}", result.ranks, source,
                                        result.verified ? "all equal" : "DIFFER"));
  outcome.details.push_back(carried.empty() ? "gridcast carried no call: the shim left it to MPI" : carried.front());
  outcome.details.insert(outcome.details.end(), steps.begin(), steps.end());
  if (!cpu_parts.empty()) outcome.details.push_back(cpu_parts);
  RecordNodeCpu(cpu_s, transfer_cpu_s, receivers, received_bytes, "MPI rank + gridcastd", &outcome);
  if (cpu_s.ok()) {
    // The node's busiest thread is its daemon's or its rank's (which mostly waits).
    std::map<std::string, double> busiest_s = cpu_meter->BusiestThreads();
    for (const auto& [node, rank_s] : RankThreadsByNode(result.thread_cpu_s, MpiNodeOrder(netgrid->state(), source))) {
      busiest_s[node] = std::max(busiest_s[node], rank_s);
    }
    RecordBusiestThreads(busiest_s, receivers, received_bytes, &outcome);
  }
  return outcome;
}

// One stream from the source to a node of its own switch and to the first node under every
// other switch (so across each uplink); the completion is SIZE at the slowest of those rates.
Result<BenchOutcome> RunIperf(const BenchContext& ctx) {
  if (!ctx.args.algo.empty()) return Status::InvalidArgument("--mode iperf measures line rate; --algo does not apply");
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, std::nullopt));
  const Node& source = ctx.model.nodes[ctx.model.source];
  std::vector<const Node*> targets;
  for (size_t s = 0; s < ctx.model.switches.size(); ++s) {
    for (const Node& node : ctx.model.nodes) {
      if (node.switch_index == static_cast<int>(s) && node.name != source.name) {
        targets.push_back(&node);
        break;
      }
    }
  }
  if (targets.empty()) return Status::InvalidArgument("the topology has no receiver to measure");
  IperfOptions options;
  options.seconds = ctx.args.iperf_seconds;
  options.log_dir = ctx.state_dir;
  BenchOutcome outcome;
  outcome.algo = "iperf3";
  double slowest_bps = 0;
  for (const Node* target : targets) {
    GRIDCAST_ASSIGN_OR_RETURN(double bps, MeasureGoodputBps(*netgrid->state().FindNode(source.name),
                                                            *netgrid->state().FindNode(target->name), options));
    const double nominal_bps = std::min(source.up_bps, target->down_bps);
    outcome.details.push_back(fmt::format("{} -> {}: {:.1f}mbit ({:.3f} of the NICs' {})", source.name,
                                          target->name, bps / 1e6, bps / nominal_bps, FormatRate(nominal_bps)));
    slowest_bps = slowest_bps == 0 ? bps : std::min(slowest_bps, bps);
  }
  outcome.completion_s = 8.0 * static_cast<double>(ctx.size_bytes) / slowest_bps;
  outcome.verified = true;
  return outcome;
}

// All-pairs iperf3 the traditional way, as many pairs at once as share no bottleneck
// (deploy/p2p_schedule.h); the completion is the whole matrix's wall time. The rates, made
// symmetric, are clustered with tomography's significance rule for the side-by-side.
Result<BenchOutcome> RunP2pMatrix(const BenchContext& ctx) {
  if (!ctx.args.algo.empty()) return Status::InvalidArgument("--mode p2p-matrix measures pairs; --algo does not apply");
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<BenchNetgrid> netgrid, BenchNetgrid::Up(ctx.model, ctx.state_dir, std::nullopt));
  const std::vector<std::vector<P2pPair>> rounds = ScheduleP2pRounds(ctx.model);
  const int n = static_cast<int>(ctx.model.nodes.size());
  DenseMatrix rate_bps(n);
  const auto start = std::chrono::steady_clock::now();
  int pairs = 0;
  for (const std::vector<P2pPair>& round : rounds) {
    std::vector<std::future<Result<double>>> measured;
    for (size_t i = 0; i < round.size(); ++i) {
      IperfOptions options;
      options.port = 5201 + static_cast<int>(i);  // receivers of one round may share a namespace
      options.seconds = ctx.args.iperf_seconds;
      options.log_dir = ctx.state_dir;
      const NetgridNode* from = netgrid->state().FindNode(ctx.model.nodes[round[i].from].name);
      const NetgridNode* to = netgrid->state().FindNode(ctx.model.nodes[round[i].to].name);
      measured.push_back(std::async(std::launch::async, [from, to, options] { return MeasureGoodputBps(*from, *to, options); }));
    }
    for (size_t i = 0; i < round.size(); ++i) {
      GRIDCAST_ASSIGN_OR_RETURN(double bps, measured[i].get());
      rate_bps.at(round[i].from, round[i].to) = bps;
      ++pairs;
    }
  }
  BenchOutcome outcome;
  outcome.algo = "iperf3-pairs";
  outcome.completion_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.verified = true;
  outcome.pairs = pairs;
  outcome.rounds = static_cast<int>(rounds.size());
  DenseMatrix similarity(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) similarity.at(i, j) = i == j ? 0 : rate_bps.at(i, j) + rate_bps.at(j, i);
  }
  const Clustering clustering = ClusterSignificant(similarity, ClusteringOptions{});
  Partition found;
  for (int i = 0; i < n; ++i) {
    const size_t c = static_cast<size_t>(clustering.cluster[static_cast<size_t>(i)]);
    if (found.clusters.size() <= c) found.clusters.resize(c + 1);
    found.clusters[c].push_back(ctx.model.nodes[static_cast<size_t>(i)].name);
  }
  found = Canonical(std::move(found));
  outcome.clusters = found.clusters;
  GRIDCAST_ASSIGN_OR_RETURN(double ari, AdjustedRandIndex(found, TruthFromTopology(ctx.model)));
  outcome.clusters_ari = ari;
  outcome.details.push_back(fmt::format("{} pairs of {} s each in {} rounds; the rates imply {} cluster(s), ARI {:.3f} "
                                        "against the topology's bandwidth groups",
                                        pairs, ctx.args.iperf_seconds, rounds.size(), found.clusters.size(), ari));
  for (const P2pPair& slowest : rounds.front()) {
    outcome.details.push_back(fmt::format("{} -> {}: {:.1f}mbit (path {})", ctx.model.nodes[slowest.from].name,
                                          ctx.model.nodes[slowest.to].name, rate_bps.at(slowest.from, slowest.to) / 1e6,
                                          FormatRate(slowest.rate_bps)));
  }
  return outcome;
}

std::string FormatFloat(double value) { return fmt::format("{:.6f}", value); }

// The median and max of `nodes`' CPU per GiB; none when nothing was measured, or (with a line
// in `details` saying why) when the measurement is unusable.
std::optional<CpuPerGib> SummarizeOrSay(const std::vector<NodeCpu>& nodes, const std::string& field,
                                        std::vector<std::string>* details) {
  if (nodes.empty()) return std::nullopt;
  Result<CpuPerGib> summary = SummarizeCpuPerGib(nodes);
  if (summary.ok()) return *summary;
  details->push_back("no " + field + ": " + summary.status().message());
  return std::nullopt;
}

std::string CpuField(const std::optional<CpuPerGib>& cpu) {
  return cpu ? fmt::format("{{\"median\": {}, \"max\": {}}}", FormatFloat(cpu->median), FormatFloat(cpu->max))
             : "null";
}

// The modes of `gridcast bench`: the gridcastd broadcasts are told apart by what `gridcast send
// --mode` they run (RunDaemonBroadcast); every other mode has a runner of its own.
struct BenchModeInfo {
  BenchMode mode;
  const char* name;  // as --mode names it
  const char* help;
  std::optional<PlanMode> send_mode;
  Result<BenchOutcome> (*run)(const BenchContext& ctx);
  bool broadcast = true;  // its time is compared with the broadcast bound
};

const std::vector<BenchModeInfo>& BenchModes() {
  static const std::vector<BenchModeInfo> modes = {
      {BenchMode::kPush, "push", "gridcastd trees", PlanMode::kPush, nullptr},
      {BenchMode::kPull, "pull", "gridcastd swarm", PlanMode::kPull, nullptr},
      {BenchMode::kPullDefault, "pull-default", "libtorrent's own settings", PlanMode::kPull, nullptr},
      {BenchMode::kHybrid, "hybrid", "push with pull repair", PlanMode::kHybrid, nullptr},
      {BenchMode::kMpi, "mpi", "tuned MPI_Bcast", std::nullopt,
       [](const BenchContext& ctx) { return RunMpi(ctx, /*tuned=*/true); }},
      {BenchMode::kMpiDefault, "mpi-default", "Open MPI's own choice", std::nullopt,
       [](const BenchContext& ctx) { return RunMpi(ctx, /*tuned=*/false); }},
      {BenchMode::kMpiShim, "mpi-shim",
       "the same MPI program, its MPI_Bcast through libgridcast-mpi.so and gridcastd", std::nullopt,
       [](const BenchContext& ctx) { return RunMpiShim(ctx, MpiCollective::kBcast); }},
      {BenchMode::kIperf, "iperf", "line rate", std::nullopt, RunIperf},
      {BenchMode::kP2pMatrix, "p2p-matrix", "iperf3 between all pairs, the tomography baseline; --size unused",
       std::nullopt, RunP2pMatrix, /*broadcast=*/false},
      {BenchMode::kAllgather, "allgather", "gridcast allgather of one part of SIZE / nodes per node", std::nullopt,
       RunAllgather},
      {BenchMode::kMpiAllgather, "mpi-allgather", "tuned MPI_Allgather of the same parts", std::nullopt,
       RunMpiAllgather},
      {BenchMode::kMpiShimAllgather, "mpi-shim-allgather",
       "its program's MPI_Allgather through libgridcast-mpi.so", std::nullopt,
       [](const BenchContext& ctx) { return RunMpiShim(ctx, MpiCollective::kAllgather); }},
      {BenchMode::kSbcast, "sbcast", "Slurm's sbcast in a batch job on a real Slurm over the netgrid", std::nullopt,
       RunSbcast},
      {BenchMode::kSlurmStage, "slurm-stage", "gridcast slurm stage in the same job", std::nullopt, RunSlurmStage},
  };
  return modes;
}

const BenchModeInfo& InfoOf(BenchMode mode) {
  const std::vector<BenchModeInfo>& modes = BenchModes();
  return *std::find_if(modes.begin(), modes.end(), [mode](const BenchModeInfo& info) { return info.mode == mode; });
}

// What one bench run measured, as Bench prints it.
struct BenchReport {
  const BenchArgs& args;
  const BenchModeInfo& mode;
  const BenchOutcome& outcome;
  const NetworkModel& model;
  uint64_t size = 0;
  double bound_s = 0;
  double ratio = 0;
  std::optional<CpuPerGib> cpu, transfer_cpu, busiest_thread;
};

// One JSON line (docs/performance.md gives its shape).
void PrintBenchJson(const BenchReport& r) {
  std::string pull_fields;
  if (r.outcome.source_copies) {
    pull_fields = fmt::format(", \"source_copies\": {}, \"uplink_copies\": {}", FormatFloat(*r.outcome.source_copies),
                              nlohmann::json(r.outcome.uplink_copies).dump());
  }
  if (!r.outcome.control.is_null()) pull_fields += ", \"control\": " + r.outcome.control.dump();
  if (r.outcome.part_bytes) pull_fields += fmt::format(", \"part_bytes\": {}", *r.outcome.part_bytes);
  if (r.outcome.simulated_s) pull_fields += fmt::format(", \"simulated_s\": {}", FormatFloat(*r.outcome.simulated_s));
  if (r.args.tls) pull_fields += ", \"tls\": true";
  if (!r.outcome.digest.empty()) pull_fields += ", \"digest\": " + nlohmann::json(r.outcome.digest).dump();
  if (r.outcome.moved_bytes) {
    pull_fields += fmt::format(", \"moved_bytes\": {}, \"reused_bytes\": {}", *r.outcome.moved_bytes,
                               r.outcome.reused_bytes.value_or(0));
  }
  if (r.outcome.wall_s) pull_fields += fmt::format(", \"wall_s\": {}", FormatFloat(*r.outcome.wall_s));
  if (r.outcome.survivors_bound_s) {
    pull_fields += fmt::format(", \"survivors_bound_s\": {}, \"survivors_ratio\": {}",
                               FormatFloat(*r.outcome.survivors_bound_s),
                               FormatFloat(r.outcome.completion_s / *r.outcome.survivors_bound_s));
  }
  if (r.outcome.patched_predicted_s) {
    pull_fields += fmt::format(", \"patched_predicted_s\": {}, \"patched_predicted_ratio\": {}",
                               FormatFloat(*r.outcome.patched_predicted_s),
                               FormatFloat(r.outcome.completion_s / *r.outcome.patched_predicted_s));
  }
  if (r.outcome.repairs.is_array()) pull_fields += ", \"repairs\": " + r.outcome.repairs.dump();
  if (!r.outcome.finished_s.empty()) pull_fields += ", \"finished_s\": " + nlohmann::json(r.outcome.finished_s).dump();
  if (r.outcome.others_completion_s && r.outcome.others_bound_s) {
    nlohmann::json slowed = nlohmann::json::array();
    for (const BenchOutcome::Slowed& s : r.outcome.slowed) {
      slowed.push_back({{"member", s.member}, {"rate_bps", s.rate_bps}, {"completion_s", s.completion_s},
                        {"nic_s", s.nic_s}, {"nic_ratio", s.completion_s / s.nic_s}});
    }
    pull_fields += fmt::format(", \"others_completion_s\": {}, \"others_bound_s\": {}, \"others_ratio\": {}, \"slowed\": {}",
                               FormatFloat(*r.outcome.others_completion_s), FormatFloat(*r.outcome.others_bound_s),
                               FormatFloat(*r.outcome.others_completion_s / *r.outcome.others_bound_s), slowed.dump());
  }
  if (r.outcome.origin) {
    const BenchOutcome::Origin& o = *r.outcome.origin;
    const double alone_s = std::max(o.download_s, o.local_completion_s);
    pull_fields += fmt::format(
        ", \"origin_rate_bps\": {}, \"origin_download_s\": {}, \"local_completion_s\": {}, "
        "\"origin_ratio\": {}, \"origin\": {}",
        FormatFloat(o.rate_bps), FormatFloat(o.download_s), FormatFloat(o.local_completion_s),
        FormatFloat(alone_s > 0 ? r.outcome.completion_s / alone_s : 0), o.summary.dump());
  }
  if (r.outcome.transfer_s) {
    pull_fields += fmt::format(", \"transfer_s\": {}, \"transfer_ratio\": {}", FormatFloat(*r.outcome.transfer_s),
                               FormatFloat(r.bound_s > 0 ? *r.outcome.transfer_s / r.bound_s : 0));
  }
  if (!r.args.base_change.empty()) {
    pull_fields += fmt::format(
        ", \"base_change\": \"{}\", \"base_size_bytes\": {}, \"base_completion_s\": {}, \"base_wall_s\": {}",
        r.args.base_change, r.size, FormatFloat(r.outcome.base_completion_s.value_or(0)),
        FormatFloat(r.outcome.base_wall_s.value_or(0)));
  }
  if (r.outcome.pairs) {
    pull_fields += fmt::format(", \"pairs\": {}, \"rounds\": {}, \"clusters\": {}, \"clusters_ari\": {}",
                               *r.outcome.pairs, *r.outcome.rounds, nlohmann::json(r.outcome.clusters).dump(),
                               FormatFloat(*r.outcome.clusters_ari));
  }
  fmt::print("{{\"mode\": {}, \"algo\": {}, \"size_bytes\": {}, \"completion_s\": {}, \"bound_s\": {}, "
             "\"ratio\": {}, \"verified\": {}, \"cpu_s_per_gib\": {}, \"transfer_cpu_s_per_gib\": {}, "
             "\"busiest_thread_cpu_s_per_gib\": {}{}}}\n",
             nlohmann::json(r.mode.name).dump(), nlohmann::json(r.outcome.algo).dump(), r.outcome.size_bytes.value_or(r.size),
             FormatFloat(r.outcome.completion_s), FormatFloat(r.bound_s), FormatFloat(r.ratio),
             r.outcome.verified ? "true" : "false", CpuField(r.cpu), CpuField(r.transfer_cpu),
             CpuField(r.busiest_thread), pull_fields);
}

void PrintBenchText(const BenchReport& r) {
  fmt::print("{}{} {} on {} ({} nodes): {} in {:.3f} s, bound {:.3f} s, ratio {:.3f}, {}\n", r.mode.name,
             r.args.tls ? " (TLS)" : "",
             r.outcome.algo, r.model.name, r.model.nodes.size(), FormatSize(r.outcome.size_bytes.value_or(r.size)),
             r.outcome.completion_s, r.bound_s, r.ratio, r.outcome.verified ? "verified" : "NOT VERIFIED");
  if (r.outcome.transfer_s && *r.outcome.transfer_s < r.outcome.completion_s) {
    fmt::print("  from the request (planning, hashing, Prepare included); the transfer alone {:.3f} s, ratio {:.3f}\n",
               *r.outcome.transfer_s, r.bound_s > 0 ? *r.outcome.transfer_s / r.bound_s : 0);
  }
  if (r.outcome.survivors_bound_s) {
    fmt::print("  the survivors' bound (the killed members' upload removed) {:.3f} s, ratio {:.3f}\n",
               *r.outcome.survivors_bound_s, r.outcome.completion_s / *r.outcome.survivors_bound_s);
  }
  if (r.outcome.patched_predicted_s) {
    fmt::print("  the simulator's prediction of the patched plan {:.3f} s, measured / predicted {:.3f}\n",
               *r.outcome.patched_predicted_s, r.outcome.completion_s / *r.outcome.patched_predicted_s);
  }
  if (r.outcome.origin) {
    const BenchOutcome::Origin& o = *r.outcome.origin;
    const double alone_s = std::max(o.download_s, o.local_completion_s);
    fmt::print("  staged from an HTTP origin behind {}: curl alone {:.3f} s on the source, the local file's broadcast "
               "{:.3f} s; staged / the longer of the two {:.3f}\n",
               FormatRate(o.rate_bps), o.download_s, o.local_completion_s,
               alone_s > 0 ? r.outcome.completion_s / alone_s : 0);
  }
  if (r.outcome.others_completion_s && r.outcome.others_bound_s) {
    fmt::print("  the others (neither slowed nor killed) done at {:.3f} s, their bound {:.3f} s, ratio {:.3f}\n",
               *r.outcome.others_completion_s, *r.outcome.others_bound_s,
               *r.outcome.others_completion_s / *r.outcome.others_bound_s);
    for (const BenchOutcome::Slowed& s : r.outcome.slowed) {
      fmt::print("  {} slowed to {}: done at {:.3f} s, its NIC's time {:.3f} s, ratio {:.3f}\n", s.member,
                 FormatRate(s.rate_bps), s.completion_s, s.nic_s, s.completion_s / s.nic_s);
    }
  }
  if (r.cpu) {
    std::vector<std::string> per_node;
    for (const NodeCpu& node : r.outcome.node_cpu) {
      per_node.push_back(fmt::format("{} {:.3f}", node.node, CpuSecondsPerGib(node)));
    }
    fmt::print("  CPU per GiB received ({}, user + system, {} receiving nodes): median {:.3f} s, max {:.3f} s "
               "({})\n",
               r.outcome.cpu_of, r.outcome.node_cpu.size(), r.cpu->median, r.cpu->max, fmt::join(per_node, ", "));
  }
  if (r.transfer_cpu) {
    fmt::print("  ... once the receive memory was taken: median {:.3f} s, max {:.3f} s\n", r.transfer_cpu->median,
               r.transfer_cpu->max);
  }
  if (r.busiest_thread) {
    fmt::print("  ... of a node's busiest thread (what bounds a node with cores of its own): median {:.3f} s, "
               "max {:.3f} s\n",
               r.busiest_thread->median, r.busiest_thread->max);
  }
  for (const std::string& line : r.outcome.details) fmt::print("  {}\n", line);
}

int Bench(const BenchArgs& args) {
  Result<NetworkModel> model = LoadTopology(args.topology);
  if (!model.ok()) return ReportError(model.status());
  Result<uint64_t> size = ParseSizeBytes(args.size);
  if (!size.ok() || *size == 0) {
    return ReportError(Status::InvalidArgument("--size: " + (size.ok() ? "must be positive" : size.status().message())));
  }
  if (model->nodes.size() < 2) return ReportError(Status::InvalidArgument("the topology needs at least 2 nodes"));
  if (geteuid() != 0) return ReportError(Status::PermissionDenied("gridcast bench builds a netgrid: run it as root"));
  const fs::path state_dir = args.state.empty() ? fs::path(fmt::format("/tmp/gridcast-bench-{}", getpid())) : fs::path(args.state);
  const BenchContext ctx{args, *model, *size, fs::absolute(state_dir)};

  const BenchModeInfo& mode = InfoOf(args.mode);
  if (args.tls && !mode.send_mode) return ReportError(Status::InvalidArgument("--tls: only push, pull and hybrid run gridcastd"));
  if ((args.no_reuse || !args.base_change.empty() || !args.slow.empty() || !args.origin_rate.empty()) &&
      !mode.send_mode) {
    return ReportError(Status::InvalidArgument(
        "--no-reuse, --base-change, --slow, --origin-rate: only push, pull and hybrid send with gridcastd"));
  }
  Result<BenchOutcome> outcome = mode.send_mode ? RunDaemonBroadcast(ctx, *mode.send_mode) : mode.run(ctx);
  if (!outcome.ok()) return ReportError(outcome.status().WithContext(std::string("bench --mode ") + mode.name));

  // A matrix of pairs is no broadcast: no bound to compare with.
  const double bound_s = outcome->bound_s           ? *outcome->bound_s
                         : !mode.broadcast ? 0
                                                     : BroadcastBoundSeconds(*model, model->source, {}, *size);
  const double ratio = bound_s > 0 ? outcome->completion_s / bound_s : 0;
  // Modes that measure no CPU (iperf, p2p-matrix, sbcast) or failed to: null.
  const std::optional<CpuPerGib> cpu = SummarizeOrSay(outcome->node_cpu, "cpu_s_per_gib", &outcome->details);
  const std::optional<CpuPerGib> transfer_cpu =
      SummarizeOrSay(outcome->transfer_cpu, "transfer_cpu_s_per_gib", &outcome->details);
  const std::optional<CpuPerGib> busiest_thread =
      SummarizeOrSay(outcome->busiest_thread, "busiest_thread_cpu_s_per_gib", &outcome->details);
  const BenchReport report{args, mode, *outcome, *model, *size, bound_s, ratio, cpu, transfer_cpu, busiest_thread};
  if (args.json) {
    PrintBenchJson(report);
  } else {
    PrintBenchText(report);
  }
  return outcome->verified ? kExitOk : kExitFailure;
}

}  // namespace

const char* BenchModeName(BenchMode mode) { return InfoOf(mode).name; }

std::vector<std::string> BaseChangeNames() {
  std::vector<std::string> names;
  for (BaseChange kind : kAllBaseChanges) names.emplace_back(BaseChangeName(kind));
  names.emplace_back(kTreeChange);
  return names;
}

void AddBenchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* bench = app.add_subcommand(
      "bench", "Time one broadcast on a fresh netgrid against the physical bound (needs root)");
  bench->add_option("--topology", args->topology, "Topology YAML file")->required();
  bench->add_option("--size", args->size, "Payload size, e.g. 256MiB")->required();
  std::vector<std::string> mode_names;
  std::string modes_help;
  for (const BenchModeInfo& mode : BenchModes()) {
    mode_names.emplace_back(mode.name);
    modes_help += fmt::format("{}{} ({})", modes_help.empty() ? "" : ", ", mode.name, mode.help);
  }
  bench->add_option_function<std::string>(
           "--mode",
           [args](const std::string& name) {
             const std::vector<BenchModeInfo>& modes = BenchModes();
             args->mode = std::find_if(modes.begin(), modes.end(), [&](const BenchModeInfo& m) { return m.name == name; })->mode;
           },
           modes_help)
      ->required()
      ->check(CLI::IsMember(mode_names));
  bench->add_option("--kill", args->kill, "push or hybrid: kill this many interior members of the push trees mid-broadcast; the JSON "
                    "adds survivors_bound_s, survivors_ratio, patched_predicted_s and patched_predicted_ratio")
      ->check(CLI::Range(0, 1000));
  bench->add_option("--origin-rate", args->origin_rate,
                    "push, pull, hybrid: stage the payload from an HTTP origin (python3 -m http.server in a namespace "
                    "of its own) behind a link of RATE to the source, e.g. 200mbit; the JSON adds curl alone on the "
                    "source (origin_download_s), the local file's broadcast (local_completion_s) and origin_ratio "
                    "(staged / the longer of the two; docs/origin.md)");
  bench->add_option("--kill-at", args->kill_at, "push or hybrid: ... after this fraction of the bound (default 0.5, mid-broadcast)")
      ->check(CLI::Range(0.0, 10.0));
  bench->add_option("--slow", args->slow,
                    "push, pull, hybrid: NAME=RATE shapes that member's NIC to RATE both ways once the netgrid is up, "
                    "while the topology the planner reads keeps its full rate (repeatable); the JSON adds "
                    "others_completion_s, others_bound_s, others_ratio and slowed")
      ->allow_extra_args(false);
  bench->add_option("--algo", args->algo,
                    "push, slurm-stage: planner (default auto); mpi: Open MPI bcast algorithm (default pipeline); "
                    "allgather: all-to-all planner (default auto); mpi-allgather: Open MPI allgather algorithm "
                    "(default ring); sbcast: fanout:N (default: sbcast's own)");
  bench->add_option("--chunk", args->chunk,
                    "push, pull, hybrid, allgather, slurm-stage: chunk (pull: piece) size (default: the planner's); sbcast: its --size");
  bench->add_flag("--in-memory", args->in_memory,
                  "push, allgather: receivers keep the payload in memory (--in-memory)");
  bench->add_option("--digest", args->digest,
                    "push, pull, hybrid, allgather, slurm-stage, mpi-shim, mpi-shim-allgather: the chunk digest, "
                    "sha256 or xxh3 (default: sha256; the mpi-shim modes: the shim's default)")
      ->check(CLI::IsMember({"sha256", "xxh3"}));
  bench->add_flag("--no-reuse", args->no_reuse,
                  "push, pull, hybrid: members take nothing from earlier copies (send --no-reuse)");
  bench->add_option(
      "--base-change", args->base_change,
      "push, pull, hybrid: send the payload, change it (same: not at all; scattered: 1% rewritten in 8 places; "
      "insert: 64 KiB in the middle; append: 4 MiB at the end; prepend: 4 KiB at the front; tree: the payload is "
      "a directory of 1,000 files, ten edited, two added, one removed), send it again, "
      "and report the second send beside the first's time (base_completion_s; docs/delta.md)")
      ->check(CLI::IsMember(BaseChangeNames()));
  bench->add_flag("--tls", args->tls,
                  "push, pull, hybrid: daemons serve TLS on control and data (a fresh cluster CA in the state directory)");
  bench->add_option("--daemon-arg", args->daemon_args, "push: extra argument for every gridcastd (repeatable)")
      ->allow_extra_args(false);
  bench->add_option("--observations", args->observations, "pull: keep the broadcast's observations (JSON) here");
  bench->add_option("--segment", args->segment, "mpi: segment size of the forced algorithm (default 1MiB)");
  bench->add_option("--iperf-seconds", args->iperf_seconds, "iperf, p2p-matrix: seconds per measured path (default 5)")
      ->check(CLI::Range(1, 600));
  bench->add_option("--state", args->state,
                    "State directory, must not exist or be empty; removed at the end (default /tmp/gridcast-bench-PID)");
  bench->add_flag("--json", args->json,
                  "Print one JSON object: mode, algo, size_bytes, completion_s, bound_s, ratio, verified, "
                  "cpu_s_per_gib, transfer_cpu_s_per_gib, busiest_thread_cpu_s_per_gib; gridcast modes also "
                  "transfer_s and transfer_ratio (docs/performance.md)");
  bench->callback([args, exit_code] { *exit_code = Bench(*args); });
}

}  // namespace gridcast::cli
