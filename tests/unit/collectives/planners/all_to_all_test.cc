// Shapes of the all-to-all multicast planners: message layout, and each strategy's lanes written
// out by hand for small p.
#include <gtest/gtest.h>

#include "collectives/planners/all_to_all_auto.h"
#include "collectives/simulator/simulator.h"
#include "tests/unit/collectives/planners/plan_shape.h"
#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

std::vector<std::string> AllToAllPlanners() {
  std::vector<std::string> names;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind == PlannerKind::kAllToAll) names.push_back(info.name);
  }
  return names;
}

TEST(AllToAll, EveryStrategyIsRegistered) {
  EXPECT_EQ(AllToAllPlanners(), (std::vector<std::string>{"ring", "prefix-send", "kprefix:8", "kshift:8",
                                                          "mesh2d", "hypercube", "auto-alltoall"}));
}

TEST(AllToAll, LaneIIsMemberIsMessage) {
  for (const std::string& name : AllToAllPlanners()) {
    for (int p : {1, 2, 3, 5, 8, 12, 14, 17, 33, 64}) {
      // 3p + 2 chunks: members 0 and 1 own 4 chunks, the others 3, in member order.
      Plan plan = ShapePlan(name, p, 3 * p + 2);
      ASSERT_EQ(plan.lanes.size(), static_cast<size_t>(p)) << name;
      uint64_t next = 0;
      for (int i = 0; i < p; ++i) {
        const Lane& lane = plan.lanes[i];
        EXPECT_EQ(lane.source, i) << name << " p=" << p;
        ASSERT_EQ(lane.chunks.size(), 1u);
        EXPECT_EQ(lane.chunks[0].begin, next) << name << " p=" << p << " member " << i;
        const uint64_t own = (p == 1 ? 5u : i < 2 ? 4u : 3u);
        EXPECT_EQ(lane.ChunkCount(), own) << name << " p=" << p << " member " << i;
        next += own;
      }
    }
    // Fewer chunks than members: members 0..n-1 own one chunk each and have the only lanes.
    Plan plan = ShapePlan(name, 9, 4);
    ASSERT_EQ(plan.lanes.size(), 4u) << name;
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(plan.lanes[i].Carries(static_cast<uint64_t>(i)));
    EXPECT_EQ(ShapePlan(name, 9, 0).lanes.size(), 1u) << name;
  }
}

// PlanOptions::parts: where each member's part lies, by node index; the lanes follow it.
PlanOptions PartsOptions(std::vector<ChunkRange> parts) {
  PlanOptions options;
  options.chunk_bytes = 1;
  options.parts = std::move(parts);
  return options;
}

TEST(AllToAll, PartsPutEachMembersLaneWhereTold) {
  const NetworkModel net = FlatNetwork(4);
  // Node 3 first, node 1 without a part, node 0 holding the most.
  const PlanOptions options = PartsOptions({{2, 9, 1}, {0, 0, 1}, {1, 2, 1}, {0, 1, 1}});
  for (const std::string& name : AllToAllPlanners()) {
    Result<std::unique_ptr<Planner>> planner = MakePlanner(name);
    ASSERT_TRUE(planner.ok());
    Result<Plan> plan = (*planner)->MakePlan(net, 9, options);
    ASSERT_TRUE(plan.ok()) << name << ": " << plan.status().ToString();
    ASSERT_TRUE(ValidatePlanOn(*plan, net).ok()) << name;
    ASSERT_EQ(plan->lanes.size(), 3u) << name;
    for (const Lane& lane : plan->lanes) {
      const ChunkRange& part = options.parts[net.FindNode(plan->members[lane.source]).value()];
      ASSERT_EQ(lane.chunks.size(), 1u) << name;
      EXPECT_EQ(lane.chunks[0].begin, part.begin) << name;
      EXPECT_EQ(lane.chunks[0].end, part.end) << name;
    }
    EXPECT_EQ(PartBytesByMember(*plan), (std::vector<uint64_t>{7, 0, 1, 1})) << name;
  }
}

TEST(AllToAll, PartsThatDoNotCoverThePayloadOnceAreRefused) {
  const NetworkModel net = FlatNetwork(3);
  Result<std::unique_ptr<Planner>> ring = MakePlanner("ring");
  ASSERT_TRUE(ring.ok());
  auto refused = [&](std::vector<ChunkRange> parts, uint64_t chunks) {
    Result<Plan> plan = (*ring)->MakePlan(net, chunks, PartsOptions(std::move(parts)));
    return plan.status().code() == StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused({{0, 2, 1}, {1, 3, 1}, {3, 4, 1}}, 4));   // overlap
  EXPECT_TRUE(refused({{0, 1, 1}, {2, 3, 1}, {3, 4, 1}}, 4));   // gap
  EXPECT_TRUE(refused({{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}, 4));   // short of the payload
  EXPECT_TRUE(refused({{0, 2, 2}, {2, 3, 1}, {3, 4, 1}}, 4));   // not contiguous
  EXPECT_TRUE(refused({{0, 2, 1}, {2, 4, 1}}, 4));              // not one per node
  PlanOptions not_member = PartsOptions({{0, 2, 1}, {2, 3, 1}, {3, 4, 1}});
  not_member.members = {0, 1};
  EXPECT_EQ((*ring)->MakePlan(net, 4, not_member).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(refused({{0, 2, 1}, {2, 3, 1}, {3, 4, 1}}, 4));
}

TEST(AllToAll, AutoKeepsTheFastestPrediction) {
  // Two sites of 4 behind a slow uplink: the planners differ in how often each message crosses.
  const NetworkModel net = TwoSites(4, 4, 100e6, 400e6, 50e6, 0);
  PlanOptions options;
  options.chunk_bytes = 256 << 10;
  const uint64_t payload = 64ull << 20;
  Result<std::unique_ptr<Planner>> chooser = MakePlanner("auto-alltoall");
  ASSERT_TRUE(chooser.ok());
  Result<Plan> chosen = (*chooser)->MakePlan(net, payload, options);
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  EXPECT_NE(chosen->algorithm, "auto-alltoall");
  EXPECT_NE(chosen->rationale.find("predicted, efficiency"), std::string::npos) << chosen->rationale;
  // Those sending each message across the slow uplink once per receiver there cannot win and
  // are not simulated.
  EXPECT_NE(chosen->rationale.find("ruled out by their lower bound"), std::string::npos) << chosen->rationale;
  Result<SimResult> chosen_sim = SimulatePlan(*chosen, net, DaemonPredictionOptions(8));
  ASSERT_TRUE(chosen_sim.ok());
  for (const std::string& name : AllToAllPlanners()) {
    if (name == "auto-alltoall") continue;
    Result<Plan> plan = (*MakePlanner(name))->MakePlan(net, payload, options);
    if (!plan.ok()) continue;
    Result<SimResult> sim = SimulatePlan(*plan, net, DaemonPredictionOptions(8));
    ASSERT_TRUE(sim.ok());
    EXPECT_LE(chosen_sim->completion_s, sim->completion_s + 1e-9) << name;
  }
}

TEST(AllToAll, Ring) {
  Plan plan = ShapePlan("ring", 5, 5);
  EXPECT_EQ(EdgesOf(plan.lanes[3]), (Edges{{3, {4}}, {4, {0}}, {0, {1}}, {1, {2}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[0]), (Edges{{0, {1}}, {1, {2}}, {2, {3}}, {3, {4}}}));
}

TEST(AllToAll, PrefixSend) {
  // Step j goes to 5 XOR j.
  EXPECT_EQ(EdgesOf(ShapePlan("prefix-send", 8, 8).lanes[5]), (Edges{{5, {4, 7, 6, 1, 0, 3, 2}}}));
  // p = 6: partners 7 and 6 are holes and are skipped.
  EXPECT_EQ(EdgesOf(ShapePlan("prefix-send", 6, 6).lanes[5]), (Edges{{5, {4, 1, 0, 3, 2}}}));
}

TEST(AllToAll, KPrefix) {
  // Blocks {0..3}, {4..7}: 1 prefix-sends in its block (1^1, 1^2, 1^3), then passes to 5.
  Plan plan = ShapePlan("kprefix:4", 8, 8);
  EXPECT_EQ(EdgesOf(plan.lanes[1]), (Edges{{1, {0, 3, 2, 5}}, {5, {4, 7, 6}}}));
  // p = 10: the last block {8, 9} is short. Member 3's carrier there is 8 + 3 mod 2 = 9.
  plan = ShapePlan("kprefix:4", 10, 10);
  EXPECT_EQ(EdgesOf(plan.lanes[3]), (Edges{{3, {2, 1, 0, 7}}, {7, {6, 5, 4, 9}}, {9, {8}}}));
  // Starting in the short block, the ring wraps to block 0 (carrier 0 + 9 mod 4 = 1).
  EXPECT_EQ(EdgesOf(plan.lanes[9]), (Edges{{9, {8, 1}}, {1, {0, 3, 2, 5}}, {5, {4, 7, 6}}}));
  // kprefix:1 is the ring.
  EXPECT_EQ(EdgesOf(ShapePlan("kprefix:1", 6, 6).lanes[2]),
            EdgesOf(ShapePlan("ring", 6, 6).lanes[2]));
  // Not a power of two: rejected.
  Result<std::unique_ptr<Planner>> three = MakePlanner("kprefix:3");
  ASSERT_TRUE(three.ok());
  EXPECT_EQ((*three)->MakePlan(FlatNetwork(6), 6, PlanOptions{}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(AllToAll, KShift) {
  // k = 4: node p sends to p-2, p-1, p+1 and then p+4.
  Plan plan = ShapePlan("kshift:4", 8, 8);
  EXPECT_EQ(EdgesOf(plan.lanes[0]), (Edges{{0, {6, 7, 1, 4}}, {4, {2, 3, 5}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[6]), (Edges{{6, {4, 5, 7, 2}}, {2, {0, 1, 3}}}));
  // p = 10: two windows cover -2..5; 6 and 7 are left, and 7 (nearest to 8) carries them.
  plan = ShapePlan("kshift:4", 10, 10);
  EXPECT_EQ(EdgesOf(plan.lanes[0]), (Edges{{0, {8, 9, 1, 4}}, {4, {2, 3, 5, 7}}, {7, {6}}}));
  // k = 3: p-1, p+1, p+3.
  EXPECT_EQ(EdgesOf(ShapePlan("kshift:3", 6, 6).lanes[1]), (Edges{{1, {0, 2, 4}}, {4, {3, 5}}}));
  // kshift:1 is the ring.
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(EdgesOf(ShapePlan("kshift:1", 7, 7).lanes[i]),
              EdgesOf(ShapePlan("ring", 7, 7).lanes[i]));
  }
}

TEST(AllToAll, Mesh2dFullGrid) {
  // 3x3: 4 = (1,1) sends along its row to 5 and 3, then down its column to 7 and 1; each row
  // peer forwards down its own column.
  EXPECT_EQ(EdgesOf(ShapePlan("mesh2d", 9, 9).lanes[4]),
            (Edges{{4, {5, 3, 7, 1}}, {5, {8, 2}}, {3, {6, 0}}}));
}

TEST(AllToAll, Mesh2dHoles) {
  // The paper's example: 4x4 with holes at 14 and 15. Member 12 = (3,0) sends to 13, and for
  // the holes (3,2) and (3,3) to (0 mod 3, 2) = 2 and (0, 3) = 3.
  Plan plan = ShapePlan("mesh2d", 14, 14);
  EXPECT_EQ(EdgesOf(plan.lanes[12]),
            (Edges{{12, {13, 2, 3, 0, 4, 8}}, {13, {1, 5, 9}}, {2, {6, 10}}, {3, {7, 11}}}));
  // 13 = (3,1): the holes' stand-ins are (1 mod 3, 2) = 6 and (1, 3) = 7.
  EXPECT_EQ(EdgesOf(plan.lanes[13]),
            (Edges{{13, {6, 7, 12, 1, 5, 9}}, {6, {10, 2}}, {7, {11, 3}}, {12, {0, 4, 8}}}));
  // A member of a full row forwards past the holes in its column: 2 = (0,2).
  EXPECT_EQ(EdgesOf(plan.lanes[2]),
            (Edges{{2, {3, 0, 1, 6, 10}}, {3, {7, 11}}, {0, {4, 8, 12}}, {1, {5, 9, 13}}}));
  // p = 2 is one row: a direct send.
  EXPECT_EQ(EdgesOf(ShapePlan("mesh2d", 2, 2).lanes[1]), (Edges{{1, {0}}}));
}

TEST(AllToAll, HypercubeEight) {
  Plan plan = ShapePlan("hypercube", 8, 8);
  EXPECT_EQ(EdgesOf(plan.lanes[0]), (Edges{{0, {1, 2, 4}}, {1, {3, 5}}, {2, {6}}, {3, {7}}}));
  // Rooted at 5: stage 0 5->4; stage 1 5->7, 4->6; stage 2 5->1, 4->0, 7->3, 6->2.
  EXPECT_EQ(EdgesOf(plan.lanes[5]), (Edges{{5, {4, 7, 1}}, {4, {6, 0}}, {7, {3}}, {6, {2}}}));
}

TEST(AllToAll, HypercubeTwelveWithExtraNodes) {
  Plan plan = ShapePlan("hypercube", 12, 12);
  // Extra node 9 hands its message to 1 first; the 8-cube exchanges it from 1; then each of
  // 0, 2, 3 passes it to its extra partner (9 already has it).
  EXPECT_EQ(EdgesOf(plan.lanes[9]), (Edges{{9, {1}},
                                           {1, {0, 3, 5}},
                                           {0, {2, 4, 8}},
                                           {3, {7, 11}},
                                           {2, {6, 10}}}));
  // A cube member: exchange from 2, then 0..3 serve 8..11.
  EXPECT_EQ(EdgesOf(plan.lanes[2]),
            (Edges{{2, {3, 0, 6, 10}}, {3, {1, 7, 11}}, {0, {4, 8}}, {1, {5, 9}}}));
  // Hop depth: the cube's log2 8 = 3 for a cube member (its extra hops hang off shallower
  // members), one more for an extra node's message (9 -> 1 -> 0 -> 2 -> 6).
  EXPECT_EQ(MaxOf(Depths(plan.lanes[2], 12)), 3);
  EXPECT_EQ(MaxOf(Depths(plan.lanes[9], 12)), 4);
}

}  // namespace
}  // namespace gridcast
