// Reconstruct: the whole tomography pipeline, observations of K broadcasts -> clusters,
// flagged nodes, inter-cluster bottleneck and intra-cluster rate estimates, the stability of
// the answer as runs were added, and an inferred network model.
//
// Steps: similarity.h aggregates the runs (and flags nodes with too little data), clustering.h
// keeps the significant clusters of the other nodes, bandwidth_estimate.h measures every
// ordered pair of clusters and each cluster's per-node receive rate. The partition is also
// computed after runs 1..k for every k, for `--runs auto` (partition_compare.h).
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "include/gridcast/result.h"
#include "tomography/bandwidth_estimate.h"
#include "tomography/clustering.h"
#include "tomography/observations.h"
#include "tomography/partition_compare.h"
#include "tomography/similarity.h"

namespace gridcast {

struct TomographyOptions {
  SimilarityOptions similarity;
  ClusteringOptions clustering;
  BandwidthOptions bandwidth;
  int stable_last_n = 3;  // PartitionStability's window
};

struct TomographyResult {
  int runs = 0;
  std::string source;     // the most frequent source of the runs (first in name order on ties)
  Similarity similarity;  // all runs aggregated; includes the flagged nodes
  // Sorted by size descending, then by first name; names sorted inside.
  std::vector<std::vector<std::string>> clusters;
  std::vector<FlaggedNode> flagged;
  // [a][b]: estimated available rate from cluster a to cluster b, bit/s; 0 on the diagonal
  // and where no timed bytes crossed (see inter_cluster[a][b].runs).
  std::vector<std::vector<double>> inter_cluster_bps;
  std::vector<std::vector<RateEstimate>> inter_cluster;
  // Per-node receive rate inside each cluster, bit/s.
  std::vector<double> intra_cluster_bps;
  std::vector<RateEstimate> intra_cluster;
  // Each cluster's traffic to and from all other clusters (what its uplink carried).
  std::vector<RateEstimate> egress, ingress;
  // One line per clustering decision: "depth D [names]: reason".
  std::vector<std::string> decisions;
  std::vector<Partition> after_each_run;  // the partition after runs 1..k
  StabilityDecision stability;
};

// Errors: InvalidArgument from AggregateRuns() (bad runs or options). Zero runs give an empty
// result (no clusters).
Result<TomographyResult> Reconstruct(const std::vector<Observations>& runs,
                                     const TomographyOptions& options);

// {"clusters":[[...]],"inter_cluster_mbit":[[...]],"intra_cluster_mbit":[...],"runs":N,
//  "seconds":F}: what `gridcast tomography` prints; `seconds` is measured by the caller.
std::string TomographyJson(const TomographyResult& result, double seconds);

// The result as a network (inferred_topology.h): NICs = intra-cluster rates, a cluster's
// uplink = the larger of its egress and ingress rates (the direction that saturated; the other
// only shows what was needed). Errors: as InferNetworkModel().
Result<NetworkModel> InferredNetwork(const TomographyResult& result);

}  // namespace gridcast
