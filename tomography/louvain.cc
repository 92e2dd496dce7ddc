#include "tomography/louvain.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "common/splitmix64.h"

namespace gridcast {
namespace {

std::vector<double> Degrees(const DenseMatrix& w) {
  std::vector<double> k(w.size(), 0);
  for (int i = 0; i < w.size(); ++i) {
    for (int j = 0; j < w.size(); ++j) k[i] += w.at(i, j);
  }
  return k;
}

// Sweeps in shuffled order until a sweep moves nothing. `community` holds labels < n.
bool LocalMoving(const DenseMatrix& w, double resolution, SplitMix64& rng,
                 std::vector<int>& community) {
  const int n = w.size();
  const std::vector<double> k = Degrees(w);
  const double two_m = std::accumulate(k.begin(), k.end(), 0.0);
  if (two_m <= 0) return false;
  std::vector<double> tot(n, 0);
  for (int i = 0; i < n; ++i) tot[community[i]] += k[i];

  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> link(n, 0);  // weight from the current node to each community
  bool moved_any = false;
  // Every accepted move raises Q by more than the tolerance, so sweeps end; the cap only
  // guards against rounding ping-pong.
  for (int sweep = 0; sweep < 1000; ++sweep) {
    rng.Shuffle(order);
    bool moved = false;
    for (int i : order) {
      const int own = community[i];
      std::fill(link.begin(), link.end(), 0.0);
      for (int j = 0; j < n; ++j) {
        if (j != i) link[community[j]] += w.at(i, j);
      }
      tot[own] -= k[i];
      auto gain = [&](int c) { return link[c] - resolution * k[i] * tot[c] / two_m; };
      int best = own;
      double best_gain = gain(own);
      const double tolerance = 1e-12 * (k[i] + 1e-300);
      for (int c = 0; c < n; ++c) {
        if (c == own || link[c] <= 0) continue;  // only communities the node is linked to
        double g = gain(c);
        if (g > best_gain + tolerance) {
          best = c;
          best_gain = g;
        }
      }
      tot[best] += k[i];
      if (best != own) {
        community[i] = best;
        moved = moved_any = true;
      }
    }
    if (!moved) break;
  }
  return moved_any;
}

DenseMatrix Aggregate(const DenseMatrix& w, const std::vector<int>& community, int communities) {
  DenseMatrix out(communities);
  for (int i = 0; i < w.size(); ++i) {
    for (int j = 0; j < w.size(); ++j) out.at(community[i], community[j]) += w.at(i, j);
  }
  return out;
}

}  // namespace

int Renumber(std::vector<int>& community) {
  std::vector<int> label;
  int next = 0;
  for (int& c : community) {
    if (c >= static_cast<int>(label.size())) label.resize(c + 1, -1);
    if (label[c] < 0) label[c] = next++;
    c = label[c];
  }
  return next;
}

double Modularity(const DenseMatrix& w, const std::vector<int>& community, double resolution) {
  std::vector<int> labels = community;
  const int communities = Renumber(labels);
  const std::vector<double> k = Degrees(w);
  const double two_m = std::accumulate(k.begin(), k.end(), 0.0);
  if (two_m <= 0) return 0;
  std::vector<double> in(communities, 0), tot(communities, 0);
  for (int i = 0; i < w.size(); ++i) {
    tot[labels[i]] += k[i];
    for (int j = 0; j < w.size(); ++j) {
      if (labels[i] == labels[j]) in[labels[i]] += w.at(i, j);
    }
  }
  double q = 0;
  for (int c = 0; c < communities; ++c)
    q += in[c] / two_m - resolution * (tot[c] / two_m) * (tot[c] / two_m);
  return q;
}

LouvainResult Louvain(const DenseMatrix& w, const LouvainOptions& options) {
  const int n = w.size();
  LouvainResult result;
  result.community.resize(n);
  std::iota(result.community.begin(), result.community.end(), 0);
  SplitMix64 rng(options.seed);

  DenseMatrix level_graph = w;
  while (level_graph.size() > 1) {
    std::vector<int> level(level_graph.size());
    std::iota(level.begin(), level.end(), 0);
    if (!LocalMoving(level_graph, options.resolution, rng, level)) break;
    const int communities = Renumber(level);
    for (int& c : result.community) c = level[c];
    result.levels.push_back(result.community);
    if (communities == level_graph.size()) break;
    level_graph = Aggregate(level_graph, level, communities);
  }
  LocalMoving(w, options.resolution, rng, result.community);
  Renumber(result.community);
  result.modularity = Modularity(w, result.community, options.resolution);
  return result;
}

}  // namespace gridcast
