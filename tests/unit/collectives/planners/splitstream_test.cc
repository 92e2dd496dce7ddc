// Shapes of splitstream:k: k stripes, interior-node-disjoint trees, about one upload each.
#include <gtest/gtest.h>

#include "tests/unit/collectives/planners/plan_shape.h"

namespace gridcast {
namespace {

TEST(SplitStream, WrittenOutEightMembersTwoStripes) {
  // Receivers 1..7; group 0 = {1,3,5,7} forwards stripe 0, group 1 = {2,4,6} stripe 1.
  Plan plan = ShapePlan("splitstream:2", 8, 6);
  ASSERT_EQ(plan.lanes.size(), 2u);
  EXPECT_EQ(EdgesOf(plan.lanes[0]),
            (Edges{{0, {1}}, {1, {3, 5}}, {3, {7, 2}}, {5, {4, 6}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[1]),
            (Edges{{0, {2}}, {2, {4, 6}}, {4, {1, 3}}, {6, {5, 7}}}));
  // Stripes interleave: lane 0 has chunks 0, 2, 4; lane 1 has 1, 3, 5.
  EXPECT_TRUE(plan.lanes[0].Carries(4));
  EXPECT_TRUE(plan.lanes[1].Carries(5));
  EXPECT_EQ(plan.lanes[0].ChunkCount(), 3u);
}

TEST(SplitStream, FewerReceiversThanStripes) {
  // Two receivers, four stripes asked: two stripes, each rooted at one receiver.
  Plan plan = ShapePlan("splitstream:4", 3, 8);
  ASSERT_EQ(plan.lanes.size(), 2u);
  EXPECT_EQ(EdgesOf(plan.lanes[0]), (Edges{{0, {1}}, {1, {2}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[1]), (Edges{{0, {2}}, {2, {1}}}));
  EXPECT_EQ(ShapePlan("splitstream:3", 1, 4).lanes.size(), 1u);
}

TEST(SplitStream, OneStripeIsAChain) {
  EXPECT_EQ(EdgesOf(ShapePlan("splitstream:1", 5, 2).lanes[0]),
            (Edges{{0, {1}}, {1, {2}}, {2, {3}}, {3, {4}}}));
}

TEST(SplitStream, InteriorDisjointBalancedShallow) {
  for (int k = 1; k <= 4; ++k) {
    for (int p = 8; p <= 70; ++p) {
      Plan plan = ShapePlan("splitstream:" + std::to_string(k), p, 3 * k);
      ASSERT_EQ(plan.lanes.size(), static_cast<size_t>(k));
      std::vector<int> interior_in(p, 0);
      std::vector<int> out_degree(p, 0);
      for (int t = 0; t < k; ++t) {
        const Lane& lane = plan.lanes[t];
        EXPECT_EQ(lane.ChunkCount(), 3u);
        EXPECT_TRUE(lane.Carries(static_cast<uint64_t>(t + k)));
        const Edges edges = EdgesOf(lane);
        // The source sends each stripe once.
        EXPECT_EQ(edges.at(0).size(), 1u) << "k=" << k << " p=" << p;
        for (const auto& [parent, children] : edges) {
          if (parent == 0) continue;
          interior_in[parent] += 1;
          out_degree[parent] += static_cast<int>(children.size());
        }
        if (k >= 2) {
          // Shallow: the source's hop, then a tree of fan-out >= k over p-1 members.
          EXPECT_LE(MaxOf(Depths(lane, p)), 1 + CeilLog(p, k)) << "k=" << k << " p=" << p;
        }
      }
      int total = 0;
      for (int m = 1; m < p; ++m) {
        EXPECT_LE(interior_in[m], 1) << "k=" << k << " p=" << p << " member " << m;
        // Each child gets 1/k of the payload: k children = one copy uploaded. The short groups
        // of p-1 = a·k + b (b >= 2) need a little more (see splitstream.h).
        EXPECT_LE(out_degree[m], k + 2) << "k=" << k << " p=" << p << " member " << m;
        if ((p - 1) % k <= 1 || p >= 9) {
          EXPECT_LE(out_degree[m], k + ((p - 1) % k <= 1 ? 0 : 1)) << "k=" << k << " p=" << p;
        }
        total += out_degree[m];
      }
      // Receivers forward k·(p-2) stripe copies in all: on average just under one payload each.
      EXPECT_EQ(total, k * (p - 2));
    }
  }
}

}  // namespace
}  // namespace gridcast
