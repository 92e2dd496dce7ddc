#include "tomography/partition_compare.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace gridcast {
namespace {

// Cluster sizes of each labelling and the cells of their contingency table.
struct Contingency {
  std::map<int, double> a_sizes, b_sizes;
  std::map<std::pair<int, int>, double> cells;
  double n = 0;
};

Contingency Count(const std::vector<int>& a, const std::vector<int>& b) {
  assert(a.size() == b.size());
  Contingency c;
  c.n = static_cast<double>(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    c.a_sizes[a[i]] += 1;
    c.b_sizes[b[i]] += 1;
    c.cells[{a[i], b[i]}] += 1;
  }
  return c;
}

template <typename Map>
double SumOfSquares(const Map& sizes) {
  double sum = 0;
  for (const auto& [key, size] : sizes) sum += size * size;
  return sum;
}

double Entropy(const std::map<int, double>& sizes, double n) {
  double h = 0;
  for (const auto& [label, size] : sizes) h -= size / n * std::log(size / n);
  return h;
}

// Labels of both partitions over the sorted union of their names.
Result<std::pair<std::vector<int>, std::vector<int>>> Labels(const Partition& a,
                                                             const Partition& b) {
  std::map<std::string, std::pair<int, int>> label;  // name -> (label in a, label in b)
  for (int pass = 0; pass < 2; ++pass) {
    const Partition& p = pass == 0 ? a : b;
    for (size_t c = 0; c < p.clusters.size(); ++c) {
      for (const std::string& name : p.clusters[c]) {
        auto [it, inserted] = label.try_emplace(name, -1, -1);
        int& slot = pass == 0 ? it->second.first : it->second.second;
        if (slot >= 0) return Status::InvalidArgument("partition: '" + name + "' appears twice");
        slot = static_cast<int>(c);
      }
    }
  }
  std::pair<std::vector<int>, std::vector<int>> out;
  for (const auto& [name, labels] : label) {
    if (labels.first < 0 || labels.second < 0) {
      return Status::InvalidArgument("partitions cover different nodes: '" + name +
                                     "' is in only one of them");
    }
    out.first.push_back(labels.first);
    out.second.push_back(labels.second);
  }
  return out;
}

}  // namespace

Partition Canonical(Partition partition) {
  for (auto& cluster : partition.clusters) std::sort(cluster.begin(), cluster.end());
  std::erase_if(partition.clusters, [](const auto& cluster) { return cluster.empty(); });
  std::sort(partition.clusters.begin(), partition.clusters.end(), [](const auto& x, const auto& y) {
    if (x.size() != y.size()) return x.size() > y.size();
    return x.front() < y.front();
  });
  return partition;
}

double AdjustedRandIndex(const std::vector<int>& a, const std::vector<int>& b) {
  const Contingency c = Count(a, b);
  const double squares = SumOfSquares(c.cells);
  const double tp = squares - c.n;  // pairs together in both
  const double fp = SumOfSquares(c.b_sizes) - squares;
  const double fn = SumOfSquares(c.a_sizes) - squares;
  const double tn = c.n * c.n - fp - fn - squares;
  if (fn == 0 && fp == 0) return 1.0;
  return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn));
}

double NormalizedMutualInformation(const std::vector<int>& a, const std::vector<int>& b) {
  const Contingency c = Count(a, b);
  if (c.a_sizes.size() == c.b_sizes.size() && c.a_sizes.size() <= 1) return 1.0;
  double mi = 0;  // sum over cells of p_ij log(p_ij / (p_i p_j))
  for (const auto& [key, size] : c.cells) {
    mi += size / c.n * std::log(size * c.n / (c.a_sizes.at(key.first) * c.b_sizes.at(key.second)));
  }
  const double normaliser = (Entropy(c.a_sizes, c.n) + Entropy(c.b_sizes, c.n)) / 2;
  return std::max(mi, 0.0) / std::max(normaliser, 1e-300);
}

Result<double> AdjustedRandIndex(const Partition& a, const Partition& b) {
  GRIDCAST_ASSIGN_OR_RETURN(auto labels, Labels(a, b));
  return AdjustedRandIndex(labels.first, labels.second);
}

Result<double> NormalizedMutualInformation(const Partition& a, const Partition& b) {
  GRIDCAST_ASSIGN_OR_RETURN(auto labels, Labels(a, b));
  return NormalizedMutualInformation(labels.first, labels.second);
}

StabilityDecision PartitionStability(const std::vector<Partition>& after_each_run, int last_n) {
  last_n = std::max(last_n, 2);
  const int k = static_cast<int>(after_each_run.size());
  if (k < last_n) {
    return {false, std::to_string(k) + " runs; stability needs the last " + std::to_string(last_n) +
                       " to agree"};
  }
  for (int i = k - last_n; i < k; ++i) {
    for (int j = i + 1; j < k; ++j) {
      Result<double> ari = AdjustedRandIndex(after_each_run[i], after_each_run[j]);
      const std::string which =
          "after runs " + std::to_string(i + 1) + " and " + std::to_string(j + 1);
      if (!ari.ok()) return {false, which + ": " + ari.status().message()};
      if (*ari < 1.0) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.3f", *ari);
        return {false, which + ": ARI " + std::string(buffer) + " < 1"};
      }
    }
  }
  return {true, "the partitions after runs " + std::to_string(k - last_n + 1) + ".." +
                    std::to_string(k) + " are identical (pairwise ARI 1)"};
}

bool PartitionStable(const std::vector<Partition>& after_each_run, int last_n) {
  return PartitionStability(after_each_run, last_n).stable;
}

}  // namespace gridcast
