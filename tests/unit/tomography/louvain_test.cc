// Louvain: finds obvious communities, is deterministic for a seed, survives degenerate graphs.
#include "tomography/louvain.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/unit/tomography/synthetic.h"

namespace gridcast {
namespace {

TEST(LouvainTest, SeparatesTwoCliquesJoinedByOneEdge) {
  DenseMatrix w(6);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      if (i != j && i / 3 == j / 3) w.at(i, j) = 1;
    }
  }
  w.at(2, 3) = w.at(3, 2) = 1;
  LouvainResult r = Louvain(w, {});
  EXPECT_EQ(r.community, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  // Q = sum over the two cliques of in/2m - (tot/2m)^2 with 2m = 14, in = 6, tot = 7.
  EXPECT_NEAR(r.modularity, 2 * (6.0 / 14 - 0.25), 1e-12);
  EXPECT_NEAR(Modularity(w, r.community, 1.0), r.modularity, 1e-12);
  EXPECT_FALSE(r.levels.empty());
}

TEST(LouvainTest, ResolutionChangesTheScale) {
  // Four cliques of 4 in two pairs: low resolution sees the pairs, high sees the cliques.
  const DenseMatrix w = testing::PlantedMatrix({{0, 0},
                                                {0, 0},
                                                {0, 0},
                                                {0, 0},
                                                {0, 1},
                                                {0, 1},
                                                {0, 1},
                                                {0, 1},
                                                {1, 0},
                                                {1, 0},
                                                {1, 0},
                                                {1, 0},
                                                {1, 1},
                                                {1, 1},
                                                {1, 1},
                                                {1, 1}},
                                               {0.01, 1, 10}, 0, 1);
  LouvainOptions coarse{.resolution = 0.2};
  LouvainOptions fine{.resolution = 1.0};
  std::vector<int> coarse_labels = Louvain(w, coarse).community;
  EXPECT_EQ(Renumber(coarse_labels), 2);
  std::vector<int> fine_labels = Louvain(w, fine).community;
  EXPECT_EQ(Renumber(fine_labels), 4);
}

TEST(LouvainTest, DeterministicForASeed) {
  const DenseMatrix w = testing::PlantedMatrix(testing::FlatPaths({5, 5, 6}), {1, 1.4}, 0.3, 9);
  const LouvainResult a = Louvain(w, {.seed = 42});
  const LouvainResult b = Louvain(w, {.seed = 42});
  EXPECT_EQ(a.community, b.community);
  EXPECT_EQ(a.modularity, b.modularity);
  EXPECT_EQ(a.levels, b.levels);
}

TEST(LouvainTest, DegenerateGraphs) {
  EXPECT_TRUE(Louvain(DenseMatrix(0), {}).community.empty());
  EXPECT_EQ(Louvain(DenseMatrix(1), {}).community, std::vector<int>{0});
  const LouvainResult zeros = Louvain(DenseMatrix(4), {});
  EXPECT_EQ(zeros.community, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(zeros.modularity, 0);
  DenseMatrix equal(5, 1.0);
  for (int i = 0; i < 5; ++i) equal.at(i, i) = 0;
  const LouvainResult together = Louvain(equal, {});
  EXPECT_EQ(together.community, (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_NEAR(together.modularity, 0, 1e-12);
  // Self-loops as heavy as every edge leave nothing to gain by joining.
  EXPECT_EQ(Louvain(DenseMatrix(5, 1.0), {}).community, (std::vector<int>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace gridcast
