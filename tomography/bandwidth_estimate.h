// Bandwidth estimates from the time bins of pull broadcasts: the available rate from one set
// of nodes to another (across a cluster boundary, what the uplinks between them allow) and the
// per-node receive rate of a set (what a cluster's NICs achieve).
//
// Estimator, per run: add up the bins of every pair from a sender in `from` to a receiver in
// `to` into one series of bytes per bin; its peak is the peak_quantile of the non-zero bins (so
// one burst does not set it); the flow is "active" in the bins carrying at least
// active_fraction of the peak; the run's rate is the bytes of the active bins divided by their
// time. Runs combine by the median.
// Assumptions: while a cross-cluster flow is active it is limited by the narrowest link on its
// way (BitTorrent keeps many connections busy, so a bottleneck uplink is saturated for most of
// the time that pieces cross it), and ramp-up, tail and idle bins are what falls below
// active_fraction of the peak. A direction that never saturates (few pieces needed that way,
// e.g. towards the source's cluster) gives only a lower bound of its capacity; the caller
// decides what to trust (inferred_topology.h takes the larger direction).
// Pairs without bins (bytes_per_bin empty) carry no timing and are ignored here.
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tomography/observations.h"

namespace gridcast {

struct BandwidthOptions {
  double active_fraction = 0.5;  // of the peak; lower keeps more ramp bins
  double peak_quantile = 0.9;    // 1 = the largest bin
};

struct RateEstimate {
  double bps = 0;   // bits per second; 0 when no run showed the flow
  int runs = 0;     // runs in which the flow carried timed bytes
  int samples = 0;  // active bins over those runs
  // Confidence: (max - min) / median of the per-run rates when runs >= 2; with one run the
  // coefficient of variation of its active bins. Smaller is better.
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
