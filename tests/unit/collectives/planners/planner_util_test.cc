// planner_util: per-edge streams, switch routes and chunk interleaving.
#include "collectives/planners/planner_util.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

TEST(PlannerUtil, StreamsPerEdgeCoverEveryChild) {
  Lane lane;
  lane.streams = 2;
  AddEdge(lane, 0, 1);
  AddEdge(lane, 0, 2, 5);
  AddEdge(lane, 0, 3);
  ASSERT_EQ(lane.fanouts.size(), 1u);
  EXPECT_EQ(lane.fanouts[0].children, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(lane.fanouts[0].streams, (std::vector<int>{2, 5, 2}));
}

TEST(PlannerUtil, SwitchRouteGoesUpThenDown) {
  NetworkModel net;
  net.switches = {
      {"core", -1}, {"a", 0, 10, 20, 0.5}, {"b", 0, 30, 40, 0.25}, {"a1", 1, 50, 60, 0}};
  const std::vector<UplinkHop> route = SwitchRoute(net, 3, 2);
  ASSERT_EQ(route.size(), 3u);
  EXPECT_EQ(route[0].switch_index, 3);
  EXPECT_TRUE(route[0].up);
  EXPECT_EQ(route[0].rate_bps, 50);
  EXPECT_EQ(route[1].switch_index, 1);
  EXPECT_TRUE(route[1].up);
  EXPECT_EQ(route[2].switch_index, 2);
  EXPECT_FALSE(route[2].up);
  EXPECT_EQ(route[2].rate_bps, 40);
  EXPECT_EQ(route[2].latency_s, 0.25);
  EXPECT_TRUE(SwitchRoute(net, 1, 1).empty());
  EXPECT_EQ(SwitchRoute(net, 1, 3).size(), 1u);
}

TEST(PlannerUtil, InterleavedChunksLeavesLateLanesEmptyWithinThePayload) {
  const ChunkRange empty = InterleavedChunks(1, 2, 1);
  EXPECT_EQ(empty.Count(), 0u);
  EXPECT_LE(empty.end, 1u);
  EXPECT_EQ(InterleavedChunks(0, 2, 0).Count(), 0u);
  EXPECT_EQ(InterleavedChunks(0, 2, 0).end, 0u);
  EXPECT_EQ(InterleavedChunks(5, 2, 1).Count(), 2u);
}

TEST(PlannerUtil, CheckSwitchTree) {
  NetworkModel net;
  net.switches = {{"core", -1}, {"a", 0}};
  net.nodes = {{"n", 1}};
  EXPECT_TRUE(CheckSwitchTree(net).ok());
  net.nodes[0].switch_index = 2;
  EXPECT_FALSE(CheckSwitchTree(net).ok());
  net.nodes[0].switch_index = 1;
  net.switches[1].parent = 1;
  EXPECT_FALSE(CheckSwitchTree(net).ok());
}

}  // namespace
}  // namespace gridcast
