// Shapes of the single-tree broadcasts: binary, binomial, knomial.
#include <gtest/gtest.h>

#include <functional>

#include "tests/unit/collectives/planners/plan_shape.h"

namespace gridcast {
namespace {

// One-port rounds: a member receives one round after its parent had it, plus its position in
// the parent's send order (the parent sends one child per round).
int Rounds(const Lane& lane, int p) {
  std::vector<int> round(p, 0);
  const Edges edges = EdgesOf(lane);
  int last = 0;
  std::function<void(int)> visit = [&](int v) {
    auto it = edges.find(v);
    if (it == edges.end()) return;
    for (size_t j = 0; j < it->second.size(); ++j) {
      const int c = it->second[j];
      round[c] = round[v] + static_cast<int>(j) + 1;
      last = std::max(last, round[c]);
      visit(c);
    }
  };
  visit(lane.source);
  return last;
}

std::vector<int> SubtreeSizes(const Lane& lane, int p) {
  std::vector<int> size(p, 1);
  const Edges edges = EdgesOf(lane);
  std::function<int(int)> count = [&](int v) {
    auto it = edges.find(v);
    if (it != edges.end()) {
      for (int c : it->second) size[v] += count(c);
    }
    return size[v];
  };
  count(lane.source);
  return size;
}

TEST(BinaryPlanner, HeapChildren) {
  Plan plan = ShapePlan("binary", 10, 5);
  ASSERT_EQ(plan.lanes.size(), 1u);
  EXPECT_EQ(plan.lanes[0].source, 0);
  EXPECT_EQ(plan.lanes[0].ChunkCount(), 5u);
  EXPECT_EQ(EdgesOf(plan.lanes[0]),
            (Edges{{0, {1, 2}}, {1, {3, 4}}, {2, {5, 6}}, {3, {7, 8}}, {4, {9}}}));
}

TEST(BinaryPlanner, DepthIsFloorLog2) {
  for (int p = 2; p <= 70; ++p) {
    Plan plan = ShapePlan("binary", p, 1);
    EXPECT_EQ(MaxOf(Depths(plan.lanes[0], p)), CeilLog(p + 1, 2) - 1) << "p=" << p;
  }
}

TEST(BinomialPlanner, WrittenOut) {
  // Round 0: 0->1. Round 1: 0->2, 1->3. Round 2: 0->4, 1->5, 2->6, 3->7.
  EXPECT_EQ(EdgesOf(ShapePlan("binomial", 8, 3).lanes[0]),
            (Edges{{0, {1, 2, 4}}, {1, {3, 5}}, {2, {6}}, {3, {7}}}));
  EXPECT_EQ(EdgesOf(ShapePlan("binomial", 6, 3).lanes[0]),
            (Edges{{0, {1, 2, 4}}, {1, {3, 5}}}));
  EXPECT_EQ(EdgesOf(ShapePlan("binomial", 11, 3).lanes[0]),
            (Edges{{0, {1, 2, 4, 8}}, {1, {3, 5, 9}}, {2, {6, 10}}, {3, {7}}}));
}

TEST(BinomialPlanner, RoundsDepthAndLargestSubtreeFirst) {
  for (int p = 1; p <= 70; ++p) {
    const Lane lane = ShapePlan("binomial", p, 2).lanes[0];
    // Round-optimal under one-port: ceil(log2 p) rounds.
    EXPECT_EQ(Rounds(lane, p), CeilLog(p, 2)) << "p=" << p;
    // Hop depth is at most the round count, and equal for powers of two (rank p-1 has log2 p
    // set bits).
    const int depth = MaxOf(Depths(lane, p));
    EXPECT_LE(depth, CeilLog(p, 2)) << "p=" << p;
    if ((p & (p - 1)) == 0) {
      EXPECT_EQ(depth, CeilLog(p, 2)) << "p=" << p;
    }
    // Every parent sends to its largest subtree first.
    const std::vector<int> size = SubtreeSizes(lane, p);
    for (const auto& [parent, children] : EdgesOf(lane)) {
      for (size_t j = 1; j < children.size(); ++j) {
        EXPECT_GE(size[children[j - 1]], size[children[j]]) << "p=" << p << " parent " << parent;
      }
    }
    // The root has one child per round.
    if (p > 1) {
      EXPECT_EQ(EdgesOf(lane).at(0).size(), static_cast<size_t>(CeilLog(p, 2)));
    }
  }
}

TEST(KnomialPlanner, TwoIsBinomial) {
  for (int p = 1; p <= 70; ++p) {
    EXPECT_EQ(EdgesOf(ShapePlan("knomial:2", p, 1).lanes[0]),
              EdgesOf(ShapePlan("binomial", p, 1).lanes[0]))
        << "p=" << p;
  }
}

TEST(KnomialPlanner, WrittenOut) {
  // Base 3: round 0 sends to +1, +2; round 1 to +3, +6; round 2 to +9.
  EXPECT_EQ(EdgesOf(ShapePlan("knomial:3", 10, 1).lanes[0]),
            (Edges{{0, {1, 2, 3, 6, 9}}, {1, {4, 7}}, {2, {5, 8}}}));
  // Base 4, p = 20: 0 -> 1,2,3 | 4,8,12 | 16; 1 -> 5,9,13 | 17; 2 -> 6,10,14 | 18; 3 -> ... 19.
  EXPECT_EQ(EdgesOf(ShapePlan("knomial", 20, 1).lanes[0]),
            (Edges{{0, {1, 2, 3, 4, 8, 12, 16}},
                   {1, {5, 9, 13, 17}},
                   {2, {6, 10, 14, 18}},
                   {3, {7, 11, 15, 19}}}));
}

TEST(KnomialPlanner, FanoutAndDepth) {
  for (int k = 2; k <= 6; ++k) {
    for (int p = 2; p <= 70; ++p) {
      const Lane lane = ShapePlan("knomial:" + std::to_string(k), p, 1).lanes[0];
      const int levels = CeilLog(p, k);
      EXPECT_LE(MaxOf(Depths(lane, p)), levels) << "k=" << k << " p=" << p;
      size_t widest = 0;
      for (const auto& [parent, children] : EdgesOf(lane)) {
        widest = std::max(widest, children.size());
      }
      EXPECT_LE(widest, static_cast<size_t>((k - 1) * levels)) << "k=" << k << " p=" << p;
      // When p is a power of k the root uses every slot: k-1 children in each of log_k p rounds.
      long long power = 1;
      while (power < p) power *= k;
      if (power == p) {
        EXPECT_EQ(EdgesOf(lane).at(0).size(), static_cast<size_t>((k - 1) * levels));
      }
    }
  }
}

TEST(KnomialPlanner, Registry) {
  EXPECT_EQ((*MakePlanner("knomial"))->name(), "knomial:4");
  EXPECT_EQ((*MakePlanner("knomial:7"))->name(), "knomial:7");
  EXPECT_FALSE(MakePlanner("knomial:1").ok());
  EXPECT_FALSE(MakePlanner("binomial:2").ok());
}

}  // namespace
}  // namespace gridcast
