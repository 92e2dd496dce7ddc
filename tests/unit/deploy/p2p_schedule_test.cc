#include "deploy/p2p_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "collectives/topology.h"

namespace gridcast {
namespace {

NetworkModel Parse(const char* yaml) {
  Result<NetworkModel> model = ParseTopology(yaml);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? *model : NetworkModel{};
}

// Every ordered pair once, and per round no shaped NIC carries two pairs.
void ExpectCompleteAndFeasible(const NetworkModel& model, const std::vector<std::vector<P2pPair>>& rounds) {
  std::set<std::pair<int, int>> seen;
  for (const auto& round : rounds) {
    ASSERT_FALSE(round.empty());
    std::set<int> senders, receivers;
    for (const P2pPair& p : round) {
      EXPECT_NE(p.from, p.to);
      EXPECT_TRUE(seen.insert({p.from, p.to}).second) << p.from << "->" << p.to << " twice";
      if (!std::isinf(model.nodes[p.from].up_bps)) {
        EXPECT_TRUE(senders.insert(p.from).second);
      }
      if (!std::isinf(model.nodes[p.to].down_bps)) {
        EXPECT_TRUE(receivers.insert(p.to).second);
      }
    }
  }
  const size_t n = model.nodes.size();
  EXPECT_EQ(seen.size(), n * (n - 1));
}

TEST(P2pScheduleTest, FlatNicsPackIntoNMinusOneRounds) {
  const NetworkModel model = Parse(R"(
name: flat
switches: [{name: s}]
nodes: [{switch: s, count: 6, up: 100mbit, down: 100mbit}]
)");
  const auto rounds = ScheduleP2pRounds(model);
  ExpectCompleteAndFeasible(model, rounds);
  EXPECT_EQ(rounds.size(), 5u);
  EXPECT_EQ(rounds[0][0].rate_bps, 100e6);
}

TEST(P2pScheduleTest, ABottleneckUplinkSerialisesItsPairsAndAWideOneIsShared) {
  // b's 50mbit uplink carries one 100mbit-NIC pair at a time each way; a's 400mbit uplink four.
  const NetworkModel model = Parse(R"(
name: two
switches:
  - {name: core}
  - {name: a, parent: core, uplink: 400mbit}
  - {name: b, parent: core, uplink: 50mbit}
nodes:
  - {switch: a, count: 4, up: 100mbit, down: 100mbit}
  - {switch: b, count: 4, up: 100mbit, down: 100mbit}
)");
  const auto rounds = ScheduleP2pRounds(model);
  ExpectCompleteAndFeasible(model, rounds);
  // 16 pairs a -> b each need b's downlink alone: at least 16 rounds, and greedy needs no more.
  EXPECT_EQ(rounds.size(), 16u);
  for (const auto& round : rounds) {
    int into_b = 0, out_of_b = 0;
    for (const P2pPair& p : round) {
      const bool from_b = model.nodes[p.from].switch_index == 2, to_b = model.nodes[p.to].switch_index == 2;
      into_b += !from_b && to_b;
      out_of_b += from_b && !to_b;
      if (from_b != to_b) {
        EXPECT_EQ(p.rate_bps, 50e6);
      }
    }
    EXPECT_LE(into_b, 1);
    EXPECT_LE(out_of_b, 1);
  }
}

TEST(P2pScheduleTest, UnshapedNicsAndTinyModels) {
  const NetworkModel unshaped = Parse(R"(
name: free
switches: [{name: s}]
nodes: [{switch: s, count: 3}]
)");
  const auto rounds = ScheduleP2pRounds(unshaped);
  ASSERT_EQ(rounds.size(), 1u);  // nothing limits: all six pairs at once
  EXPECT_EQ(rounds[0].size(), 6u);
  const NetworkModel one = Parse(R"(
name: one
switches: [{name: s}]
nodes: [{names: [only], switch: s}]
)");
  EXPECT_TRUE(ScheduleP2pRounds(one).empty());
}

}  // namespace
}  // namespace gridcast
