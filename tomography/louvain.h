// Louvain community detection (Blondel et al. 2008) on a dense weighted graph: maximises the
// modularity Q = 1/(2m) * sum_ij [A_ij - resolution * k_i k_j / (2m)] * [c_i == c_j] by local
// moving (each node to the neighbouring community with the best gain) and aggregation
// (communities become nodes), repeated until nothing moves; then one more local-moving pass
// over the original nodes, which fixes nodes that a coarse level placed badly (the cheap half
// of Leiden's refinement; the connectivity half adds nothing on the complete graphs we get).
//
// Modularity alone is not trusted to say whether clusters exist: on a dense, nearly uniform
// matrix it splits noise. clustering.h decides which splits are real.
//
// Deterministic: the node order of each sweep is a splitmix64 shuffle of `seed`.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "tomography/dense_matrix.h"

namespace gridcast {

struct LouvainOptions {
  // gamma: above 1 favours smaller communities, below 1 larger ones.
  double resolution = 1.0;
  uint64_t seed = 1;
};

struct LouvainResult {
  std::vector<int> community;  // per node; labels 0..k-1 in order of first appearance
  double modularity = 0;
  // The partition of the nodes after each level that moved something, finest first (the
  // last one, before the final pass, is the coarsest). Empty when nothing moved.
  std::vector<std::vector<int>> levels;
};

// REQUIRES: w symmetric with finite entries >= 0 (the diagonal may hold self-loops).
// A graph without weight leaves every node alone (modularity 0).
LouvainResult Louvain(const DenseMatrix& w, const LouvainOptions& options);

// Q of `community` (labels >= 0, any numbering); 0 for a graph without weight.
double Modularity(const DenseMatrix& w, const std::vector<int>& community, double resolution);

// Relabels to 0..k-1 in order of first appearance; returns k.
int Renumber(std::vector<int>& community);

}  // namespace gridcast
