// Bandwidth estimates from the time bins of pull broadcasts: the available rate from one set
// of nodes to another (across a cluster boundary, what the uplinks between them allow) and the
// per-node receive rate of a set (what a cluster's NICs achieve).
//
// Estimator, per run: add up the bins of every pair from a sender in `from` to a receiver in
// `to` into one series of bytes per bin; the run's rate is the highest rate the flow held in
// at least `sustained_s` of its bins (the k-th largest bin, k = sustained_s / bin_s), so a
// single burst bin does not set it and a link saturated for only a few seconds of a swarm
// still shows its capacity. Runs combine by the maximum: each run loads different links (the
// source's cluster sends, the others mostly receive), and a rate limit cannot be exceeded, so
// the best run is the one that came closest to it.
// Why not an average over "active" bins: a wide uplink fed by several senders is rarely
// saturated for long, and averaging its full and partial bins read the 150mbit uplinks of
// netgrid's racks.yaml 20-38% low (docs/tomography.md). tbf shapes with a hard cap, so on the
// way up a rate is only ever overstated by timing jitter of the bins (a few percent).
// Assumptions: a bottleneck uplink is saturated for at least sustained_s in some run; a
// direction that never saturates gives only a lower bound of its capacity; the caller decides
// what to trust (inferred_topology.h takes the larger direction).
// Pairs without bins (bytes_per_bin empty) carry no timing and are ignored here.
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tomography/observations.h"

namespace gridcast {

struct BandwidthOptions {
  double sustained_s = 1.5;  // time a rate must hold (in total, over any bins) to count
};

struct RateEstimate {
  double bps = 0;   // bits per second; 0 when no run showed the flow
  int runs = 0;     // runs in which the flow carried timed bytes
  int samples = 0;  // bins at or above each run's rate, over those runs
  // Confidence: (max - min) / max of the per-run rates when runs >= 2; with one run
  // (largest bin - its rate) / its rate. Smaller is better.
  double relative_spread = 0;
};

// Flow from the senders in `from` to the receivers in `to` (a node in both sets counts for
// pairs with another node; a pair's sender and receiver always differ).
RateEstimate EstimateFlowRate(const std::vector<Observations>& runs,
                              const std::set<std::string>& from, const std::set<std::string>& to,
                              const BandwidthOptions& options);

// Per-node receive rate of `members`: the bytes they received from anyone, per active time,
// divided by the number of them that were receivers in the run (members of it, not its source).
RateEstimate EstimateReceiveRate(const std::vector<Observations>& runs,
                                 const std::set<std::string>& members,
                                 const BandwidthOptions& options);

}  // namespace gridcast
