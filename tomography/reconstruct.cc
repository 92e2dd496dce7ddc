#include "tomography/reconstruct.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tomography/inferred_topology.h"

namespace gridcast {
namespace {

struct Clustered {
  Similarity similarity;
  std::vector<int> usable;  // indices into similarity.names of the clustered nodes
  Clustering clustering;
  Partition partition;  // canonical
};

Result<Clustered> ClusterRuns(const std::vector<Observations>& runs,
                              const TomographyOptions& options) {
  Clustered out;
  GRIDCAST_ASSIGN_OR_RETURN(out.similarity, AggregateRuns(runs, options.similarity));
  out.usable = out.similarity.UsableNodes();
  out.clustering = ClusterSignificant(out.similarity.weight.Select(out.usable), options.clustering);
  int count = 0;
  for (int c : out.clustering.cluster) count = std::max(count, c + 1);
  out.partition.clusters.resize(count);
  for (size_t i = 0; i < out.usable.size(); ++i) {
    out.partition.clusters[out.clustering.cluster[i]].push_back(
        out.similarity.names[out.usable[i]]);
  }
  out.partition = Canonical(std::move(out.partition));
  return out;
}

std::string MostFrequentSource(const std::vector<Observations>& runs) {
  std::map<std::string, int> count;
  for (const Observations& run : runs) ++count[run.source];
  std::string best;
  int best_count = 0;
  for (const auto& [name, c] : count) {
    if (c > best_count) {
      best = name;
      best_count = c;
    }
  }
  return best;
}

std::string DecisionLine(const SplitDecision& d, const Clustered& c) {
  std::string line = "depth " + std::to_string(d.depth) + " [";
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    line += (i ? ", " : "") + c.similarity.names[c.usable[d.nodes[i]]];
  }
  return line + "]: " + d.reason;
}

}  // namespace

Result<TomographyResult> Reconstruct(const std::vector<Observations>& runs,
                                     const TomographyOptions& options) {
  TomographyResult result;
  result.runs = static_cast<int>(runs.size());
  for (size_t k = 1; k <= runs.size(); ++k) {
    const std::vector<Observations> prefix(runs.begin(), runs.begin() + static_cast<long>(k));
    GRIDCAST_ASSIGN_OR_RETURN(Clustered clustered, ClusterRuns(prefix, options));
    result.after_each_run.push_back(clustered.partition);
    if (k < runs.size()) continue;
    for (const SplitDecision& d : clustered.clustering.decisions) {
      result.decisions.push_back(DecisionLine(d, clustered));
    }
    result.clusters = clustered.partition.clusters;
    result.flagged = clustered.similarity.flagged;
    result.similarity = std::move(clustered.similarity);
  }
  if (runs.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(result.similarity, AggregateRuns(runs, options.similarity));
  }
  result.stability = PartitionStability(result.after_each_run, options.stable_last_n);
  result.source = MostFrequentSource(runs);

  const size_t k = result.clusters.size();
  std::vector<std::set<std::string>> sets;
  std::set<std::string> placed;
  for (const auto& cluster : result.clusters) {
    sets.emplace_back(cluster.begin(), cluster.end());
    placed.insert(cluster.begin(), cluster.end());
  }
  result.inter_cluster.assign(k, std::vector<RateEstimate>(k));
  result.inter_cluster_bps.assign(k, std::vector<double>(k, 0.0));
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = 0; b < k; ++b) {
      if (a == b) continue;
      result.inter_cluster[a][b] = EstimateFlowRate(runs, sets[a], sets[b], options.bandwidth);
      result.inter_cluster_bps[a][b] = result.inter_cluster[a][b].bps;
    }
    result.intra_cluster.push_back(EstimateReceiveRate(runs, sets[a], options.bandwidth));
    result.intra_cluster_bps.push_back(result.intra_cluster.back().bps);
    std::set<std::string> rest;
    std::set_difference(placed.begin(), placed.end(), sets[a].begin(), sets[a].end(),
                        std::inserter(rest, rest.end()));
    result.egress.push_back(EstimateFlowRate(runs, sets[a], rest, options.bandwidth));
    result.ingress.push_back(EstimateFlowRate(runs, rest, sets[a], options.bandwidth));
  }
  return result;
}

std::string TomographyJson(const TomographyResult& result, double seconds) {
  using Json = nlohmann::ordered_json;
  Json inter = Json::array();
  for (const auto& row : result.inter_cluster_bps) {
    Json mbit = Json::array();
    for (double bps : row) mbit.push_back(bps / 1e6);
    inter.push_back(std::move(mbit));
  }
  Json intra = Json::array();
  for (double bps : result.intra_cluster_bps) intra.push_back(bps / 1e6);
  Json out;
  out["clusters"] = result.clusters;
  out["inter_cluster_mbit"] = std::move(inter);
  out["intra_cluster_mbit"] = std::move(intra);
  out["runs"] = result.runs;
  out["seconds"] = seconds;
  return out.dump();
}

Result<NetworkModel> InferredNetwork(const TomographyResult& result) {
  std::vector<InferredCluster> clusters;
  for (size_t c = 0; c < result.clusters.size(); ++c) {
    clusters.push_back({result.clusters[c], result.intra_cluster_bps[c],
                        std::max(result.egress[c].bps, result.ingress[c].bps)});
  }
  std::vector<std::string> unplaced;
  for (const FlaggedNode& f : result.flagged) unplaced.push_back(f.name);
  return InferNetworkModel(clusters, unplaced, result.source, "tomography");
}

}  // namespace gridcast
