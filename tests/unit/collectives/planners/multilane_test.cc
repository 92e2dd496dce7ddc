// multilane: the paper's shape for p = 4n-1 edge by edge, the generalisation's special cases,
// and the bounds that make it multi-lane (two upload slots per member, log depth).
#include "collectives/planners/multilane.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>

#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

using Edges = std::map<int, std::vector<int>>;  // parent -> children in send order

Edges EdgesOf(const Lane& lane) {
  Edges edges;
  for (const Fanout& f : lane.fanouts) edges[f.parent] = f.children;
  return edges;
}

NetworkModel Flat(int p) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  for (int i = 0; i < p; ++i) net.nodes.push_back({"n" + std::to_string(i), 0});
  return net;
}

Plan PlanFor(int p) {
  PlanOptions options;
  options.chunk_bytes = 10;
  Result<Plan> plan = MultiLanePlanner().MakePlan(Flat(p), 100, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(ValidatePlan(*plan).ok()) << ValidatePlan(*plan).ToString();
  return *plan;
}

// The site of a single-site plan: members 1..p-1 fed by the source.
std::vector<FreeUplink> FreeUplinksFor(int p) {
  std::vector<int> nodes(p - 1);
  std::iota(nodes.begin(), nodes.end(), 1);
  Lane a, b;
  return AddMultiLaneSite(nodes, 0, 0, 0, a, b);
}

// Written out from the paper's rules with A_i = rank i and B_i = rank N_A + i: internal X_i ->
// X_2i, X_2i+1; leaf A_{n+i} -> B_{2i+1}, B_{2i+2} (lane A), leaf B_{n+i} -> A_{2i+1}, A_{2i+2}.
TEST(MultiLane, PaperShapeSevenNodes) {
  // n = 2: A_1..A_3 = 1..3, B_1..B_3 = 4..6; leaves A_2, A_3 and B_2, B_3.
  const Plan plan = PlanFor(7);
  ASSERT_EQ(plan.lanes.size(), 2u);
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA]), (Edges{{0, {1}}, {1, {2, 3}}, {2, {4, 5}}, {3, {6}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB]), (Edges{{0, {4}}, {4, {5, 6}}, {5, {1, 2}}, {6, {3}}}));
  // Lane A even chunks, lane B odd: 10 chunks of 10 bytes.
  EXPECT_EQ(plan.lanes[kLaneA].chunks[0].begin, 0u);
  EXPECT_EQ(plan.lanes[kLaneB].chunks[0].begin, 1u);
  EXPECT_EQ(plan.lanes[kLaneA].chunks[0].step, 2u);
  EXPECT_EQ(plan.lanes[kLaneA].ChunkCount() + plan.lanes[kLaneB].ChunkCount(), 10u);
}

TEST(MultiLane, PaperShapeFifteenNodes) {
  // n = 4: A_1..A_7 = 1..7, B_1..B_7 = 8..14; leaves A_4..A_7 and B_4..B_7.
  const Plan plan = PlanFor(15);
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA]),
            (Edges{{0, {1}}, {1, {2, 3}}, {2, {4, 5}}, {3, {6, 7}},
                   {4, {8, 9}}, {5, {10, 11}}, {6, {12, 13}}, {7, {14}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB]),
            (Edges{{0, {8}}, {8, {9, 10}}, {9, {11, 12}}, {10, {13, 14}},
                   {11, {1, 2}}, {12, {3, 4}}, {13, {5, 6}}, {14, {7}}}));
}

TEST(MultiLane, SpareUplinksOfThePaperShapeAreTheLastLeaves) {
  for (int n = 1; n <= 50; ++n) {
    const int p = 4 * n - 1;
    const int last_a = 2 * n - 1;              // A_{2n-1}
    const int last_b = (2 * n - 1) + last_a;   // B_{2n-1}
    EXPECT_EQ(FreeUplinksFor(p), (std::vector<FreeUplink>{{last_a, kLaneA}, {last_b, kLaneB}}))
        << "p=" << p;
  }
}

TEST(MultiLane, SmallCases) {
  EXPECT_TRUE(PlanFor(1).lanes[kLaneA].fanouts.empty());
  EXPECT_TRUE(PlanFor(1).lanes[kLaneB].fanouts.empty());
  // p = 2: all of M straight to the one peer.
  EXPECT_EQ(EdgesOf(PlanFor(2).lanes[kLaneA]), (Edges{{0, {1}}}));
  EXPECT_EQ(EdgesOf(PlanFor(2).lanes[kLaneB]), (Edges{{0, {1}}}));
  // p = 3: A_1 and B_1 swap halves.
  EXPECT_EQ(EdgesOf(PlanFor(3).lanes[kLaneA]), (Edges{{0, {1}}, {1, {2}}}));
  EXPECT_EQ(EdgesOf(PlanFor(3).lanes[kLaneB]), (Edges{{0, {2}}, {2, {1}}}));
}

TEST(MultiLane, LeftOutLastANodeIsServedByTheBNodeWithOneChild) {
  // N = 5: N_A = 3 (1..3), N_B = 2 (4, 5). B's single leaf B_2 covers A_1, A_2; A_3 is left out
  // and B_1, whose only B child is B_2, sends it lane B. Tree B keeps no free uplink (the REVIEW
  // case of §1.3): both are on A_3, whose swap targets B_3 and B_4 do not exist.
  const Plan plan = PlanFor(6);
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA]), (Edges{{0, {1}}, {1, {2, 3}}, {2, {4, 5}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB]), (Edges{{0, {4}}, {4, {5, 3}}, {5, {1, 2}}}));
  EXPECT_EQ(FreeUplinksFor(6), (std::vector<FreeUplink>{{3, kLaneA}, {3, kLaneA}}));
}

// Upload slots per member over both lanes.
std::vector<int> Uploads(const Plan& plan) {
  std::vector<int> uploads(plan.members.size(), 0);
  for (const Lane& lane : plan.lanes) {
    for (const Fanout& f : lane.fanouts) uploads[f.parent] += static_cast<int>(f.children.size());
  }
  return uploads;
}

int Depth(const Lane& lane, int p) {
  std::vector<int> depth(p, 0);
  int deepest = 0;
  std::vector<int> frontier = {lane.source};
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int v : frontier) {
      for (const Fanout& f : lane.fanouts) {
        if (f.parent != v) continue;
        for (int c : f.children) {
          depth[c] = depth[v] + 1;
          deepest = std::max(deepest, depth[c]);
          next.push_back(c);
        }
      }
    }
    frontier = std::move(next);
  }
  return deepest;
}

TEST(MultiLane, TwoUploadsPerMemberAndLogDepthUpTo200) {
  for (int p = 1; p <= 200; ++p) {
    const Plan plan = PlanFor(p);
    const std::vector<int> uploads = Uploads(plan);
    for (int m = 1; m < p; ++m) EXPECT_LE(uploads[m], 2) << "p=" << p << " member " << m;
    EXPECT_LE(uploads[0], 2) << "p=" << p;
    const int bound = static_cast<int>(std::ceil(std::log2(p))) + 2;
    for (const Lane& lane : plan.lanes) EXPECT_LE(Depth(lane, p), bound) << "p=" << p;
    // Every site leaves exactly two upload slots for a WAN chain (§1.5).
    if (p >= 2) {
      EXPECT_EQ(FreeUplinksFor(p).size(), 2u) << "p=" << p;
    }
  }
}

}  // namespace
}  // namespace gridcast
