// Partitions of named nodes and how alike two of them are: the adjusted Rand index (ARI) and
// normalised mutual information (NMI), for scoring tomography against a topology's ground
// truth and for deciding when more broadcasts stop changing the answer (`--runs auto`).
//
// ARI is computed from the pair confusion matrix (as scikit-learn >= 0.24 does): 1 for equal
// partitions, about 0 for independent ones, negative below chance; 1 when both partitions are
// trivial in the same way (one cluster each, or all singletons each).
// NMI = MI / mean(H(a), H(b)), the arithmetic-mean normalisation (scikit-learn's default);
// natural logarithms (the base cancels). 1 for equal partitions, 0 for independent ones, 1 when
// both are a single cluster.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

// Clusters of node names. Canonical form (what Canonical() returns and tomography produces):
// names sorted inside each cluster, clusters by size descending, then by first name.
struct Partition {
  std::vector<std::vector<std::string>> clusters;

  friend bool operator==(const Partition&, const Partition&) = default;
};

Partition Canonical(Partition partition);

// REQUIRES: a.size() == b.size(). Labels are any integers.
double AdjustedRandIndex(const std::vector<int>& a, const std::vector<int>& b);
double NormalizedMutualInformation(const std::vector<int>& a, const std::vector<int>& b);

// Errors: InvalidArgument when a name appears twice or the two partitions do not cover the
// same names.
Result<double> AdjustedRandIndex(const Partition& a, const Partition& b);
Result<double> NormalizedMutualInformation(const Partition& a, const Partition& b);

struct StabilityDecision {
  bool stable = false;
  std::string reason;
};

// Stable when there are at least `last_n` (>= 2) partitions and the last `last_n` of them
// (the answers after 1..k aggregated runs) cover the same nodes with pairwise ARI 1.
StabilityDecision PartitionStability(const std::vector<Partition>& after_each_run, int last_n = 3);
bool PartitionStable(const std::vector<Partition>& after_each_run, int last_n = 3);

}  // namespace gridcast
