// ClusterSignificant on planted matrices with +-30% multiplicative noise (uniform): one cluster
// for homogeneous input, exact recovery of planted clusters at 1.5:1 and above, the finest
// significant level of a hierarchy, determinism, and degenerate inputs.
#include "tomography/clustering.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/tomography/synthetic.h"

namespace gridcast {
namespace {

using testing::FlatPaths;
using testing::PlantedMatrix;

constexpr double kNoise = 0.3;

int Count(const Clustering& c) {
  int k = 0;
  for (int label : c.cluster) k = std::max(k, label + 1);
  return k;
}

// Same clusters as the planted paths (labels may differ).
bool Exact(const Clustering& c, const std::vector<std::vector<int>>& paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    for (size_t j = 0; j < paths.size(); ++j) {
      if ((c.cluster[i] == c.cluster[j]) != (paths[i] == paths[j])) return false;
    }
  }
  return true;
}

ClusteringOptions WithSeed(uint64_t seed) {
  ClusteringOptions o;
  o.seed = seed;
  return o;
}

// How many of `trials` seeds recover `paths` exactly.
int Recovered(const std::vector<std::vector<int>>& paths, const std::vector<double>& levels,
              int trials) {
  int exact = 0;
  for (int t = 0; t < trials; ++t) {
    const DenseMatrix w = PlantedMatrix(paths, levels, kNoise, 100 + t);
    exact += Exact(ClusterSignificant(w, WithSeed(t)), paths);
  }
  return exact;
}

TEST(ClusteringTest, HomogeneousNoiseIsOneCluster) {
  for (int n : {4, 8, 16, 24}) {
    for (int t = 0; t < 10; ++t) {
      const DenseMatrix w = PlantedMatrix(FlatPaths({n}), {1, 1}, kNoise, 1000 * n + t);
      EXPECT_EQ(Count(ClusterSignificant(w, WithSeed(t))), 1) << "n " << n << " seed " << t;
    }
  }
}

TEST(ClusteringTest, PlantedClustersAtOneAndAHalfToOne) {
  // Over 1000 seeds about 99% are exact; the misses are mostly a homogeneous 5-8 node
  // cluster split by noise at depth 1 (see clustering.h, "Limits").
  EXPECT_GE(Recovered(FlatPaths({8, 8}), {1, 1.5}, 20), 19);
  EXPECT_GE(Recovered(FlatPaths({3, 13}), {1, 1.5}, 20), 19);
  EXPECT_GE(Recovered(FlatPaths({6, 5, 5}), {1, 1.5}, 20), 19);
}

TEST(ClusteringTest, FourClustersOfFour) {
  // Four-node clusters at exactly 1.5:1 under +-30% noise are at the edge of what 6 inside
  // pairs can show (about 90% exact over 300 seeds); at 1.6:1 about 99%.
  EXPECT_GE(Recovered(FlatPaths({4, 4, 4, 4}), {1, 1.5}, 20), 16);
  EXPECT_GE(Recovered(FlatPaths({4, 4, 4, 4}), {1, 1.6}, 20), 19);
  EXPECT_EQ(Recovered(FlatPaths({4, 4, 4, 4}), {1, 2}, 20), 20);
}

TEST(ClusteringTest, HierarchyGivesTheFinestSignificantLevel) {
  // Site 1: racks {0..3} and {4..7}; site 2: {8..15}, one switch. Cross-site 1, between the
  // racks of site 1 and inside site 2 1.5, inside a rack 2.25.
  std::vector<std::vector<int>> paths;
  for (int i = 0; i < 4; ++i) paths.push_back({0, 0});
  for (int i = 0; i < 4; ++i) paths.push_back({0, 1});
  for (int i = 0; i < 8; ++i) paths.push_back({1, 0});
  int exact = 0;
  for (int t = 0; t < 20; ++t) {
    const DenseMatrix w = PlantedMatrix(paths, {1, 1.5, 2.25}, kNoise, 500 + t);
    const Clustering c = ClusterSignificant(w, WithSeed(t));
    exact += Exact(c, paths);
    if (t == 0) {
      ASSERT_TRUE(Exact(c, paths));
      // Some decision split a set at depth >= 1: the racks were found below the sites or
      // next to them, and the reasons say which pairs passed.
      bool split = false;
      for (const SplitDecision& d : c.decisions) split |= d.parts.size() > 1;
      EXPECT_TRUE(split);
    }
  }
  EXPECT_GE(exact, 19);  // 97% over 300 seeds
}

TEST(ClusteringTest, SplitTestNumbers) {
  DenseMatrix w(4);
  auto set = [&](int i, int j, double v) { w.at(i, j) = w.at(j, i) = v; };
  set(0, 1, 3);
  set(2, 3, 3);
  for (int i : {0, 1}) {
    for (int j : {2, 3}) set(i, j, 1);
  }
  SplitTest t = TestSplit(w, {0, 1}, {2, 3}, {});
  EXPECT_DOUBLE_EQ(t.within_mean, 3);
  EXPECT_DOUBLE_EQ(t.cross_mean, 1);
  EXPECT_DOUBLE_EQ(t.ratio, 3);
  // sd of {3, 3, 1, 1, 1, 1} = sqrt(16/3 / 5); z = 2 / (sd * sqrt(1/2 + 1/4)).
  EXPECT_NEAR(t.z, 2 / (std::sqrt(16.0 / 15) * std::sqrt(0.75)), 1e-12);
  EXPECT_FALSE(t.significant);  // 2 + 2 nodes never reach z 3: too few pairs to tell
  EXPECT_FALSE(TestSplit(w, {0}, {1}, {}).significant);
  const SplitTest zeros = TestSplit(DenseMatrix(4), {0, 1}, {2, 3}, {});
  EXPECT_EQ(zeros.ratio, 1);
  EXPECT_EQ(zeros.z, 0);
}

TEST(ClusteringTest, DeterministicForASeed) {
  const DenseMatrix w = PlantedMatrix(FlatPaths({6, 5, 5}), {1, 1.5}, kNoise, 77);
  const Clustering a = ClusterSignificant(w, WithSeed(5));
  const Clustering b = ClusterSignificant(w, WithSeed(5));
  EXPECT_EQ(a.cluster, b.cluster);
  ASSERT_EQ(a.decisions.size(), b.decisions.size());
  for (size_t i = 0; i < a.decisions.size(); ++i)
    EXPECT_EQ(a.decisions[i].reason, b.decisions[i].reason);
}

TEST(ClusteringTest, DegenerateInputs) {
  EXPECT_TRUE(ClusterSignificant(DenseMatrix(0), {}).cluster.empty());
  EXPECT_EQ(ClusterSignificant(DenseMatrix(1), {}).cluster, std::vector<int>{0});
  EXPECT_EQ(ClusterSignificant(DenseMatrix(2, 1.0), {}).cluster, (std::vector<int>{0, 0}));
  for (int n : {3, 5, 16}) {
    DenseMatrix equal(n, 1.0);
    for (int i = 0; i < n; ++i) equal.at(i, i) = 0;
    EXPECT_EQ(Count(ClusterSignificant(equal, {})), 1) << n;
    EXPECT_EQ(Count(ClusterSignificant(DenseMatrix(n), {})), 1) << n;  // all zeros
  }
  // Missing pairs (zeros) inside clear clusters do not break them.
  DenseMatrix w = PlantedMatrix(FlatPaths({8, 8}), {0.1, 2}, kNoise, 3);
  w.at(0, 1) = w.at(1, 0) = 0;
  w.at(8, 9) = w.at(9, 8) = 0;
  EXPECT_TRUE(Exact(ClusterSignificant(w, {}), FlatPaths({8, 8})));
  for (const SplitDecision& d : ClusterSignificant(w, {}).decisions) {
    EXPECT_EQ(d.reason.find("nan"), std::string::npos) << d.reason;
  }
}

}  // namespace
}  // namespace gridcast
