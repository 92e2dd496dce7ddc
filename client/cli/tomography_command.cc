#include "client/cli/tomography_command.h"

#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "client/cli/cli_util.h"
#include "client/cli/tomography_args.h"
#include "client/send_summary.h"
#include "cluster/control_client.h"
#include "collectives/topology.h"
#include "common/units.h"
#include "tomography/inferred_topology.h"
#include "tomography/reconstruct.h"
#include "tomography/svg.h"

namespace gridcast::cli {
namespace {

namespace fs = std::filesystem;

// Measured on netgrid (16 nodes, 100mbit NICs, docs/tomography.md): with 16 MiB probes three
// runs take about 25 s but split two racks behind 150mbit uplinks in only 7 of 10
// measurements; 32 MiB found them in 10 of 10, estimated the bottlenecks closer, and three
// runs took 29-44 s.
constexpr const char* kDefaultProbeSize = "32MiB";

struct TomographyArgs {
  std::string cluster;
  std::string runs = "auto";
  int max_runs = 10;
  std::string size = kDefaultProbeSize;
  std::string sources = "rotate";
  bool json = false;
  std::string topology_out;
  std::string svg;
  std::string truth;
  std::string observations_out;
  std::string tls_ca;
};

// What the arguments resolve to before anything is measured.
struct Settings {
  RunCount runs;
  std::vector<std::string> sources;  // of each run, up to the cap
  uint64_t size_bytes = 0;
  std::string tls_ca;
};

struct Measurement {
  std::vector<Observations> runs;
  TomographyResult result;
  double seconds = 0;
  std::string topology_yaml;  // the inferred network
};

Result<Settings> Resolve(const TomographyArgs& args, const ClusterConfig& cluster, const TomographyOptions& options) {
  Settings settings;
  GRIDCAST_ASSIGN_OR_RETURN(settings.runs, ParseRunCount(args.runs, args.max_runs, options.stable_last_n));
  std::vector<std::string> members;
  for (const ClusterMember& m : cluster.members) members.push_back(m.name);
  if (members.size() < 2) return Status::InvalidArgument("tomography needs at least 2 members in the cluster");
  GRIDCAST_ASSIGN_OR_RETURN(settings.sources, SourcesOfRuns(args.sources, members, settings.runs.runs));
  Result<uint64_t> size = ParseSizeBytes(args.size);
  if (!size.ok() || *size == 0) {
    return Status::InvalidArgument("--size: " + (size.ok() ? "must be positive" : size.status().message()));
  }
  settings.size_bytes = *size;
  settings.tls_ca = cluster.TlsCa(args.tls_ca);
  return settings;
}

// One measurement broadcast: a fresh probe from `source` to every other member, pieces chosen
// freely by libtorrent, so the counts reflect the network and not a schedule of ours.
Result<Observations> ProbeBroadcast(const ClusterConfig& cluster, const std::string& source, uint64_t size_bytes,
                                    const std::string& tls_ca) {
  v1::BroadcastRequest request;
  request.set_probe_bytes(size_bytes);
  request.set_algorithm("swarm-free");
  request.set_mode(v1::PLAN_MODE_PULL);
  ControlClient client(cluster.Find(source)->control_address, cluster.secret, {tls_ca});
  // The daemon's own deadline (120 s + 1 s per MB) plus a margin for the last message.
  const auto timeout = std::chrono::seconds(180 + static_cast<int64_t>(size_bytes / 1000000));
  v1::BroadcastProgress last;
  const Status status = client.Broadcast(request, timeout, [&](const v1::BroadcastProgress& p) { last = p; });
  if (!status.ok()) return status.WithContext("probe broadcast from " + source);
  if (!last.finished() || !last.error().empty()) {
    return Status::Internal("probe broadcast from " + source + " failed: " + last.error());
  }
  Observations observations = ObservationsFromProgress(last, source);
  if (Status valid = ValidateObservations(observations); !valid.ok()) {
    return valid.WithContext("the daemons' observations of the run from " + source);
  }
  return observations;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs broadcasts until the count is reached or, for auto, the partition is stable.
Result<Measurement> Measure(const ClusterConfig& cluster, const Settings& settings, const TomographyOptions& options) {
  Measurement m;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < settings.runs.runs; ++k) {
    const std::string& source = settings.sources[static_cast<size_t>(k)];
    const auto run_start = std::chrono::steady_clock::now();
    GRIDCAST_ASSIGN_OR_RETURN(Observations run, ProbeBroadcast(cluster, source, settings.size_bytes, settings.tls_ca));
    m.runs.push_back(std::move(run));
    GRIDCAST_ASSIGN_OR_RETURN(m.result, Reconstruct(m.runs, options));
    std::string sizes;
    for (const auto& c : m.result.clusters) sizes += (sizes.empty() ? "" : "+") + std::to_string(c.size());
    fmt::print(stderr, "run {}: {} probe from {} in {:.2f} s: clusters {}{}\n", k + 1, FormatSize(settings.size_bytes),
               source, SecondsSince(run_start), sizes.empty() ? "none" : sizes,
               m.result.flagged.empty() ? "" : fmt::format(", {} flagged", m.result.flagged.size()));
    if (settings.runs.automatic && m.result.stability.stable) break;
  }
  m.seconds = SecondsSince(start);
  GRIDCAST_ASSIGN_OR_RETURN(NetworkModel inferred, InferredNetwork(m.result));
  m.topology_yaml = FormatTopology(inferred);
  return m;
}

Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) return Status::Internal("cannot write " + path.string());
  return Status::Ok();
}

// The cache `gridcast send --algo auto` reads; written through a temporary file so a reader
// never sees half of it.
Status UpdateCache(const std::string& cluster_file, const std::string& topology_yaml) {
  const fs::path cache = TomographyCachePath(cluster_file);
  std::error_code ec;
  fs::create_directories(cache.parent_path(), ec);
  if (ec) return Status::Internal("cannot create " + cache.parent_path().string() + ": " + ec.message());
  const fs::path temp = cache.string() + ".tmp";
  GRIDCAST_RETURN_IF_ERROR(WriteFile(temp, topology_yaml));
  fs::rename(temp, cache, ec);
  if (ec) return Status::Internal("cannot write " + cache.string() + ": " + ec.message());
  return Status::Ok();
}

// The result's partition with every flagged node as a cluster of its own (a node the
// tomography could not place counts as misplaced), scored against the truth restricted to the
// observed nodes.
Result<std::pair<double, double>> ScoreAgainstTruth(const TomographyResult& result, const NetworkModel& truth_model,
                                                   const std::string& truth_path) {
  Partition found{result.clusters};
  for (const FlaggedNode& f : result.flagged) found.clusters.push_back({f.name});
  std::set<std::string> observed(result.similarity.names.begin(), result.similarity.names.end());
  for (const std::string& name : observed) {
    if (!truth_model.FindNode(name)) {
      return Status::InvalidArgument("--truth: member '" + name + "' is not a node of " + truth_path);
    }
  }
  Partition truth;
  for (const auto& cluster : TruthFromTopology(truth_model).clusters) {
    std::vector<std::string> kept;
    for (const std::string& name : cluster) {
      if (observed.count(name)) kept.push_back(name);
    }
    if (!kept.empty()) truth.clusters.push_back(std::move(kept));
  }
  GRIDCAST_ASSIGN_OR_RETURN(double ari, AdjustedRandIndex(found, truth));
  GRIDCAST_ASSIGN_OR_RETURN(double nmi, NormalizedMutualInformation(found, truth));
  return std::make_pair(ari, nmi);
}

std::string Confidence(const RateEstimate& e) {
  if (e.runs == 0) return "no data";
  return fmt::format("+-{:.0f}% ({} run{})", 100 * e.relative_spread, e.runs, e.runs == 1 ? "" : "s");
}

void PrintTable(const Measurement& m, const std::optional<std::pair<double, double>>& score) {
  const TomographyResult& r = m.result;
  fmt::print("tomography: {} runs in {:.1f} s, {} cluster(s), {} flagged; {}\n", r.runs, m.seconds, r.clusters.size(),
             r.flagged.size(), r.stability.reason);
  for (size_t c = 0; c < r.clusters.size(); ++c) {
    std::string names;
    for (const std::string& n : r.clusters[c]) names += (names.empty() ? "" : " ") + n;
    fmt::print("  cluster {}: {} nodes, {:.1f} Mbit/s per node inside ({})\n    {}\n", c + 1, r.clusters[c].size(),
               r.intra_cluster_bps[c] / 1e6, Confidence(r.intra_cluster[c]), names);
  }
  for (const FlaggedNode& f : r.flagged) fmt::print("  flagged {}: {}\n", f.name, f.reason);
  if (r.clusters.size() > 1) {
    fmt::print("  inter-cluster Mbit/s (row sends to column):\n");
    for (size_t a = 0; a < r.clusters.size(); ++a) {
      std::string row = fmt::format("    {:>3}", a + 1);
      for (size_t b = 0; b < r.clusters.size(); ++b) {
        row += a == b ? fmt::format("  {:>22}", "-")
                      : fmt::format("  {:>7.1f} {:>14}", r.inter_cluster_bps[a][b] / 1e6, Confidence(r.inter_cluster[a][b]));
      }
      fmt::print("{}\n", row);
    }
  }
  if (score) fmt::print("  against the truth: ARI {:.3f}, NMI {:.3f}\n", score->first, score->second);
}

int Tomography(const TomographyArgs& args) {
  Result<ClusterConfig> cluster = LoadCluster(args.cluster);
  if (!cluster.ok()) return ReportError(cluster.status());
  const TomographyOptions options;
  Result<Settings> settings = Resolve(args, *cluster, options);
  if (!settings.ok()) return ReportError(settings.status());
  std::optional<NetworkModel> truth;
  if (!args.truth.empty()) {
    Result<NetworkModel> model = LoadTopology(args.truth);
    if (!model.ok()) return ReportError(model.status().WithContext("--truth"));
    truth = std::move(*model);
  }
  Result<Measurement> m = Measure(*cluster, *settings, options);
  if (!m.ok()) return ReportError(m.status());

  std::optional<std::pair<double, double>> score;
  if (truth) {
    Result<std::pair<double, double>> scored = ScoreAgainstTruth(m->result, *truth, args.truth);
    if (!scored.ok()) return ReportError(scored.status());
    score = *scored;
  }
  if (Status s = UpdateCache(args.cluster, m->topology_yaml); !s.ok()) {
    fmt::print(stderr, "gridcast: warning: the topology cache is not updated: {}\n", s.message());
  }
  if (!args.topology_out.empty()) {
    if (Status s = WriteFile(args.topology_out, m->topology_yaml); !s.ok()) return ReportError(s);
  }
  if (!args.svg.empty()) {
    if (Status s = WriteFile(args.svg, RenderSvg(m->result)); !s.ok()) return ReportError(s);
  }
  if (!args.observations_out.empty()) {
    if (Status s = WriteFile(args.observations_out, ObservationRunsToJson(m->runs) + "\n"); !s.ok()) {
      return ReportError(s);
    }
  }
  if (args.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::parse(TomographyJson(m->result, m->seconds));
    nlohmann::ordered_json flagged = nlohmann::ordered_json::array();
    for (const FlaggedNode& f : m->result.flagged) flagged.push_back({{"name", f.name}, {"reason", f.reason}});
    out["flagged"] = std::move(flagged);
    out["stable"] = m->result.stability.stable;
    if (score) out["truth"] = {{"ari", score->first}, {"nmi", score->second}};
    fmt::print("{}\n", out.dump());
  } else {
    PrintTable(*m, score);
  }
  return kExitOk;
}

}  // namespace

Result<std::string> RetomographCluster(const std::string& cluster_file, const std::string& tls_ca) {
  GRIDCAST_ASSIGN_OR_RETURN(ClusterConfig cluster, LoadCluster(cluster_file));
  TomographyArgs args;
  args.tls_ca = tls_ca;
  const TomographyOptions options;
  GRIDCAST_ASSIGN_OR_RETURN(Settings settings, Resolve(args, cluster, options));
  GRIDCAST_ASSIGN_OR_RETURN(Measurement m, Measure(cluster, settings, options));
  GRIDCAST_RETURN_IF_ERROR(UpdateCache(cluster_file, m.topology_yaml));
  fmt::print(stderr, "tomography: {} runs in {:.1f} s, {} cluster(s)\n", m.result.runs, m.seconds,
             m.result.clusters.size());
  return m.topology_yaml;
}

void AddTomographyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TomographyArgs>();
  CLI::App* command = app.add_subcommand(
      "tomography", "Discover bandwidth clusters and bottlenecks with measurement broadcasts (BitTorrent)");
  AddClusterFileOption(command, &args->cluster, "Cluster file");
  command->add_option("--runs", args->runs, "Broadcasts to run, or auto: until the clusters are stable (default auto)");
  command->add_option("--max-runs", args->max_runs, "The cap for --runs auto (default 10)");
  command->add_option("--size", args->size, fmt::format("Probe payload per run (default {})", kDefaultProbeSize));
  command->add_option("--sources", args->sources, "rotate (over the members, default) or one member's name");
  command->add_flag("--json", args->json,
                    "Print clusters, inter_cluster_mbit, intra_cluster_mbit, runs, seconds (and flagged, stable, "
                    "truth) as JSON");
  command->add_option("--topology-out", args->topology_out, "Write the inferred topology (YAML) here");
  command->add_option("--svg", args->svg, "Draw the similarity matrix and the cluster graph (SVG) here");
  command->add_option("--truth", args->truth, "A topology file: print ARI and NMI against its bandwidth groups");
  command->add_option("--observations-out", args->observations_out, "Keep every run's observations (JSON array)");
  command->add_option("--tls-ca", args->tls_ca, "PEM CA when the daemons serve TLS (default: the cluster file's tls_ca)");
  command->callback([args, exit_code] { *exit_code = Tomography(*args); });
}

}  // namespace gridcast::cli
