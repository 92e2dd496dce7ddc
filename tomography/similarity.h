// Similarity: K broadcasts' per-pair byte counts aggregated into one symmetric weight matrix,
// the graph that clustering reads, plus the nodes with too little data to place.
//
// W = sum over runs r of (F_r + F_r^T), F_r[i][j] = bytes j received from i in run r divided
// by (payload_bytes * receivers) of that run, receivers = members - 1 (all but the source).
// Why this normalisation: a run moves payload_bytes to every receiver, so each F_r sums to
// about 1 whatever its payload size or membership, and every run weighs the same; dividing by
// the bytes actually counted instead would give a run that stopped early the weight of a full
// one. Symmetrising makes "i and j exchange a lot" one number: a bandwidth cluster is fast in
// both directions, while who-sends-to-whom depends on where the source sits.
//
// Flagged nodes (never placed in a cluster, reported with the reason, first rule that holds):
//   "not observed"  no bytes sent or received in any run;
//   "never received" a receiver (member, not the source) in some run, got 0 bytes in all;
//   "little data"   total weight below min_weight_fraction of the median total weight of the
//                   observed nodes: too few samples to say where it belongs.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "include/gridcast/result.h"
#include "tomography/dense_matrix.h"
#include "tomography/observations.h"

namespace gridcast {

struct FlaggedNode {
  std::string name;
  std::string reason;

  friend bool operator==(const FlaggedNode&, const FlaggedNode&) = default;
};

struct SimilarityOptions {
  // Row/column order of the matrix. Empty: the sorted union of all members' names. Otherwise
  // it must contain every member of every run once; extra names are flagged "not observed".
  std::vector<std::string> order;
  // See "little data" above; 0 turns the rule off.
  double min_weight_fraction = 0.1;
};

struct Similarity {
  std::vector<std::string> names;
  DenseMatrix weight;                // symmetric, zero diagonal, finite, >= 0
  std::vector<FlaggedNode> flagged;  // in `names` order
  int runs = 0;

  // Indices (into names) of the nodes that are not flagged, ascending.
  std::vector<int> UsableNodes() const;
};

// Errors: InvalidArgument for a run that fails ValidateObservations() (prefixed "runs[r]"),
// an `order` with duplicates or missing a member, or a negative min_weight_fraction.
// Zero runs give an empty matrix.
Result<Similarity> AggregateRuns(const std::vector<Observations>& runs,
                                 const SimilarityOptions& options);

}  // namespace gridcast
