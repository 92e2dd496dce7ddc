#include "tomography/clustering.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "tomography/louvain.h"

namespace gridcast {
namespace {

std::string Fmt(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

std::vector<std::vector<int>> Groups(const std::vector<int>& labels, int count) {
  std::vector<std::vector<int>> groups(count);
  for (int i = 0; i < static_cast<int>(labels.size()); ++i) groups[labels[i]].push_back(i);
  return groups;
}

// Count, sum and sum of squares of the pair weights (i < j) between each two labels: every
// pair test of a partition is then O(1).
class BlockStats {
 public:
  BlockStats(const DenseMatrix& w, const std::vector<int>& labels, int count)
      : count_(count), blocks_(static_cast<size_t>(count) * count) {
    for (int i = 0; i < w.size(); ++i) {
      for (int j = i + 1; j < w.size(); ++j) {
        if (labels[i] < 0 || labels[j] < 0) continue;
        Block& b = At(labels[i], labels[j]);
        const double v = w.at(i, j);
        b.n += 1;
        b.sum += v;
        b.squares += v * v;
      }
    }
  }

  SplitTest Test(int x, int y, const ClusteringOptions& options) const {
    const Block& xx = At(x, x);
    const Block& yy = At(y, y);
    const Block& xy = At(x, y);
    SplitTest t;
    const double n_within = xx.n + yy.n;
    if (n_within == 0 || xy.n == 0) return t;  // a singleton pair: nothing to compare
    t.within_mean = (xx.sum + yy.sum) / n_within;
    t.cross_mean = xy.sum / xy.n;
    if (t.cross_mean > 0) {
      t.ratio = t.within_mean / t.cross_mean;
    } else {
      t.ratio = t.within_mean > 0 ? std::numeric_limits<double>::infinity() : 1.0;
    }
    const double n = n_within + xy.n;
    const double sum = xx.sum + yy.sum + xy.sum;
    const double squares = xx.squares + yy.squares + xy.squares;
    const double variance = n > 1 ? std::max(0.0, (squares - sum * sum / n) / (n - 1)) : 0.0;
    const double se = std::sqrt(variance * (1 / n_within + 1 / xy.n));
    t.z = se > 0 ? (t.within_mean - t.cross_mean) / se : 0;
    t.significant = t.ratio >= options.min_ratio && t.z >= options.min_z;
    return t;
  }

 private:
  struct Block {
    double n = 0, sum = 0, squares = 0;
  };
  Block& At(int a, int b) {
    return blocks_[static_cast<size_t>(std::min(a, b)) * count_ + std::max(a, b)];
  }
  const Block& At(int a, int b) const {
    return blocks_[static_cast<size_t>(std::min(a, b)) * count_ + std::max(a, b)];
  }

  int count_;
  std::vector<Block> blocks_;
};

double MeanLink(const DenseMatrix& w, const std::vector<int>& a, const std::vector<int>& b) {
  double sum = 0;
  for (int i : a) {
    for (int j : b) sum += w.at(i, j);
  }
  return sum / static_cast<double>(a.size() * b.size());
}

std::string Describe(const SplitTest& t) { return "ratio " + Fmt(t.ratio) + ", z " + Fmt(t.z); }

class Divider {
 public:
  Divider(const DenseMatrix& w, const ClusteringOptions& options) : w_(w), options_(options) {
    result_.cluster.assign(w.size(), -1);
  }

  Clustering Run() && {
    if (w_.size() > 0) {
      std::vector<int> all(w_.size());
      for (int i = 0; i < w_.size(); ++i) all[i] = i;
      Examine(std::move(all), 0);
    }
    return std::move(result_);
  }

 private:
  struct Settled {
    std::vector<int> labels;
    int count = 0;
    std::string reason;
  };

  void Examine(std::vector<int> nodes, int depth) {
    SplitDecision decision;
    decision.nodes = nodes;
    decision.depth = depth;
    const int n = static_cast<int>(nodes.size());
    if (n < 2 * options_.min_cluster_size) {
      decision.reason = "kept whole: " + std::to_string(n) + " nodes cannot make two clusters of " +
                        std::to_string(options_.min_cluster_size);
      return Leaf(std::move(decision));
    }
    if (depth >= options_.max_depth) {
      decision.reason = "kept whole: depth limit " + std::to_string(options_.max_depth);
      return Leaf(std::move(decision));
    }
    const DenseMatrix sub = w_.Select(nodes);
    Settled settled = Propose(sub);
    if (settled.count < 2) {
      decision.reason = "kept whole: " + settled.reason;
      return Leaf(std::move(decision));
    }
    decision.reason = settled.reason;
    for (const std::vector<int>& group : Groups(settled.labels, settled.count)) {
      std::vector<int> part;
      for (int local : group) part.push_back(nodes[local]);
      decision.parts.push_back(std::move(part));
    }
    std::vector<std::vector<int>> parts = decision.parts;
    result_.decisions.push_back(std::move(decision));
    for (std::vector<int>& part : parts) Examine(std::move(part), depth + 1);
  }

  // Steps 1 and 2 of the header: Louvain's finest level, merged up until every pair of parts
  // is significant; when that leaves one part, finer proposals (higher resolution) get their
  // chance, since a coarse proposal that lumps true clusters together fails as a whole.
  Settled Propose(const DenseMatrix& sub) const {
    const int n = sub.size();
    std::string first_reason;  // of the first resolution tried, when none gives a split
    for (double resolution = options_.resolution; resolution <= 1.61 * options_.resolution;
         resolution *= 1.1) {
      LouvainResult louvain = Louvain(sub, {resolution, options_.seed});
      std::vector<int> proposal(n);
      if (louvain.levels.empty()) {
        for (int i = 0; i < n; ++i) proposal[i] = i;
      } else {
        proposal = louvain.levels.front();
      }
      const int proposed = Renumber(proposal);
      Settled settled;
      if (proposed > 1) settled = Settle(sub, std::move(proposal));
      const std::string reason = proposed == 1 ? "Louvain proposes one community"
                                               : "Louvain proposes " + std::to_string(proposed) +
                                                     " parts; " + settled.reason;
      if (settled.count > 1) {
        settled.reason = reason;
        return settled;
      }
      if (first_reason.empty()) first_reason = reason + " (resolutions up to 1.6x tried)";
    }
    Settled whole;
    whole.count = 1;
    whole.reason = first_reason;
    return whole;
  }

  void Leaf(SplitDecision decision) {
    decision.parts = {decision.nodes};
    for (int node : decision.nodes) result_.cluster[node] = next_cluster_;
    ++next_cluster_;
    result_.decisions.push_back(std::move(decision));
  }

  // Step 2 of the header on the set's submatrix.
  Settled Settle(const DenseMatrix& sub, std::vector<int> labels) const {
    Settled out;
    std::string last_merge;
    for (;;) {
      int count = Renumber(labels);
      if (count > 1 && JoinUndersized(sub, labels, count)) {
        last_merge = "parts under " + std::to_string(options_.min_cluster_size) + " nodes joined";
        continue;
      }
      if (count > 1 && MoveToClosest(sub, labels)) count = Renumber(labels);
      if (count == 1) {
        out.reason = last_merge;
        break;
      }
      if (HasUndersized(labels, count)) continue;
      const BlockStats stats(sub, labels, count);
      int merge_a = -1, merge_b = -1;
      SplitTest weakest_failing, weakest;
      weakest.ratio = weakest_failing.ratio = std::numeric_limits<double>::infinity();
      for (int a = 0; a < count; ++a) {
        for (int b = a + 1; b < count; ++b) {
          const SplitTest t = stats.Test(a, b, options_);
          if (t.ratio <= weakest.ratio) weakest = t;
          if (!t.significant && (merge_a < 0 || t.ratio < weakest_failing.ratio)) {
            weakest_failing = t;
            merge_a = a;
            merge_b = b;
          }
        }
      }
      if (merge_a < 0) {
        out.reason =
            "split into " + std::to_string(count) + " (weakest pair " + Describe(weakest) + ")";
        break;
      }
      for (int& label : labels) {
        if (label == merge_b) label = merge_a;
      }
      last_merge = "the last pair merged was not significant (" + Describe(weakest_failing) +
                   "; needs ratio >= " + Fmt(options_.min_ratio) + ", z >= " + Fmt(options_.min_z) +
                   ")";
    }
    out.count = Renumber(labels);
    out.labels = std::move(labels);
    return out;
  }

  bool HasUndersized(const std::vector<int>& labels, int count) const {
    std::vector<int> sizes(count, 0);
    for (int label : labels) ++sizes[label];
    for (int size : sizes) {
      if (size < options_.min_cluster_size) return true;
    }
    return false;
  }

  // The smallest part under min_cluster_size joins the part it has the highest mean weight to.
  bool JoinUndersized(const DenseMatrix& sub, std::vector<int>& labels, int count) const {
    const std::vector<std::vector<int>> groups = Groups(labels, count);
    int small = -1;
    for (int g = 0; g < count; ++g) {
      const size_t size = groups[g].size();
      if (size < static_cast<size_t>(options_.min_cluster_size) &&
          (small < 0 || size < groups[small].size())) {
        small = g;
      }
    }
    if (small < 0) return false;
    int partner = -1;
    double best = -1;
    for (int g = 0; g < count; ++g) {
      if (g == small) continue;
      const double link = MeanLink(sub, groups[small], groups[g]);
      if (link > best) {
        best = link;
        partner = g;
      }
    }
    for (int node : groups[small]) labels[node] = partner;
    return true;
  }

  // Each node moves to the part with the highest mean weight per pair (its own part counted
  // without itself), until none moves. Not modularity: when one cluster holds most nodes, its
  // weight is what modularity's null model expects, so its members gain nothing by staying in
  // it and Louvain leaves some of them in a small cluster; per-pair means have no such blind
  // spot. Returns whether anything moved.
  bool MoveToClosest(const DenseMatrix& sub, std::vector<int>& labels) const {
    const int n = sub.size();
    bool moved_any = false;
    std::vector<double> sum(n), members(n);
    for (int sweep = 0; sweep < 100; ++sweep) {
      bool moved = false;
      for (int i = 0; i < n; ++i) {
        std::fill(sum.begin(), sum.end(), 0.0);
        std::fill(members.begin(), members.end(), 0.0);
        for (int j = 0; j < n; ++j) {
          if (j == i) continue;
          sum[labels[j]] += sub.at(i, j);
          members[labels[j]] += 1;
        }
        const int own = labels[i];
        int best = own;
        double best_mean = members[own] > 0 ? sum[own] / members[own] : -1;
        for (int c = 0; c < n; ++c) {
          if (c == own || members[c] == 0) continue;
          const double mean = sum[c] / members[c];
          if (mean > best_mean * (1 + 1e-12)) {
            best = c;
            best_mean = mean;
          }
        }
        if (best != own) {
          labels[i] = best;
          moved = moved_any = true;
        }
      }
      if (!moved) break;
    }
    return moved_any;
  }

  const DenseMatrix& w_;
  const ClusteringOptions& options_;
  Clustering result_;
  int next_cluster_ = 0;
};

}  // namespace

SplitTest TestSplit(const DenseMatrix& w, const std::vector<int>& x, const std::vector<int>& y,
                    const ClusteringOptions& options) {
  std::vector<int> labels(w.size(), -1);
  for (int i : x) labels[i] = 0;
  for (int i : y) labels[i] = 1;
  return BlockStats(w, labels, 2).Test(0, 1, options);
}

Clustering ClusterSignificant(const DenseMatrix& w, const ClusteringOptions& options) {
  return Divider(w, options).Run();
}

}  // namespace gridcast
