// sssmst: the switch tree and send order on a hand-checked topology, both order keys, the
// paralleling procedure with and without room in the channels, leaders and the intra-switch
// binomial tree.
//
// Weights below: a chunk is 125000 bytes = 10^6 bits, so crossing a 10 Mbit/s uplink weighs
// 0.1 s, and a leader with a 1 Gbit/s NIC has start-up 0.001 s.
#include "collectives/planners/sssmst.h"

#include <gtest/gtest.h>

#include <map>

#include "collectives/planners/planner_util.h"
#include "collectives/topology.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunkBytes = 125000;

NetworkModel Parse(const char* yaml) {
  Result<NetworkModel> net = ParseTopology(yaml);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return *net;
}

Plan PlanOn(const NetworkModel& net, SssMstPlanner::Options sss = {}) {
  PlanOptions options;
  options.chunk_bytes = kChunkBytes;
  Result<Plan> plan = SssMstPlanner(sss).MakePlan(net, 10 * kChunkBytes, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(ValidatePlanOn(*plan, net).ok()) << ValidatePlanOn(*plan, net).ToString();
  EXPECT_EQ(plan->lanes.size(), 1u);
  return *plan;
}

// Sends by member name: parent -> children in send order.
std::map<std::string, std::vector<std::string>> Sends(const Plan& plan) {
  std::map<std::string, std::vector<std::string>> sends;
  for (const Fanout& f : plan.lanes[0].fanouts) {
    for (int c : f.children) sends[plan.members[f.parent]].push_back(plan.members[c]);
  }
  return sends;
}

// x's subtree has the slow link deep down (w(p)_x = 0.1 behind a 0.001 link); y's is shallower
// (w(p)_y = 0.05) behind a slow link (0.1). Σ_x = 0.1 + 0.001 + 0.001, Σ_y = 0.05 + 0.1 + 0.001.
constexpr const char* kOrder = R"(switches:
  - name: core
  - {name: x, parent: core, uplink: 1gbit}
  - {name: x1, parent: x, uplink: 10mbit}
  - {name: y, parent: core, uplink: 10mbit}
  - {name: y1, parent: y, uplink: 20mbit}
nodes:
  - {switch: core, names: [s], up: 1gbit}
  - {switch: x, names: [nx], up: 1gbit}
  - {switch: x1, names: [nx1], up: 1gbit}
  - {switch: y, names: [ny], up: 1gbit}
  - {switch: y1, names: [ny1], up: 1gbit}
)";

TEST(SssMst, ShortestPathTreeInDownToUpOrder) {
  // Switch tree: core -> x -> x1, core -> y -> y1. The paper's key w(p): x (0.1) before y (0.05).
  using Sent = std::map<std::string, std::vector<std::string>>;
  EXPECT_EQ(Sends(PlanOn(Parse(kOrder))),
            (Sent{{"s", {"nx", "ny"}}, {"nx", {"nx1"}}, {"ny", {"ny1"}}}));
  // The REVIEW key Σ_u: y (0.151) before x (0.102).
  SssMstPlanner::Options sigma;
  sigma.order_key = SssMstPlanner::OrderKey::kDeliveryWeight;
  EXPECT_EQ(Sends(PlanOn(Parse(kOrder), sigma)),
            (Sent{{"s", {"ny", "nx"}}, {"nx", {"nx1"}}, {"ny", {"ny1"}}}));
}

// Every uplink is unshaped with 1 ms latency (each hop weighs 0.001). b1's leader is slow
// (start-up 0.1) and has three children bx, by, bz. Down-to-up: core sends to b (w(p) 0.102),
// then a, then c (w(p) 0, switch order); steps b 1, a 2, c 3, b1 2. Round 1 reaches b1 with
// S_H = core, b, a, c (all at 0.001 but core), b1. Candidates right to left: c (step 3 >= 2;
// 0.001 + route c->b1 0.003 < 2·0.1 + 0.001), then a (same), b and core (steps < 2: invalid).
// The route from c or a to b1 crosses b's and b1's downlinks, which already carry core->b and
// b->b1: one more path each fits two channels, two more fit three.
constexpr const char* kParallel = R"(switches:
  - name: core
  - {name: b, parent: core, latency: 1ms}
  - {name: b1, parent: b, latency: 1ms}
  - {name: bx, parent: b1, latency: 1ms}
  - {name: by, parent: b1, latency: 1ms}
  - {name: bz, parent: b1, latency: 1ms}
  - {name: a, parent: core, latency: 1ms}
  - {name: c, parent: core, latency: 1ms}
nodes:
  - {switch: core, names: [s], up: 1gbit}
  - {switch: b, names: [nb], up: 1gbit}
  - {switch: b1, names: [nb1], up: 10mbit}
  - {switch: bx, names: [nbx], up: 1gbit}
  - {switch: by, names: [nby], up: 1gbit}
  - {switch: bz, names: [nbz], up: 1gbit}
  - {switch: a, names: [na], up: 1gbit}
  - {switch: c, names: [nc], up: 1gbit}
)";

SssMstPlanner::Options Channels(int channels) {
  SssMstPlanner::Options options;
  options.channels_per_link = channels;
  return options;
}

// Paths per uplink direction over the plan's inter-switch edges.
int MaxLinkLoad(const NetworkModel& net, const Plan& plan) {
  std::map<std::pair<int, bool>, int> load;
  int most = 0;
  for (const Fanout& f : plan.lanes[0].fanouts) {
    const int from = net.nodes[*net.FindNode(plan.members[f.parent])].switch_index;
    for (int c : f.children) {
      const int to = net.nodes[*net.FindNode(plan.members[c])].switch_index;
      for (const UplinkHop& hop : SwitchRoute(net, from, to)) {
        most = std::max(most, ++load[{hop.switch_index, hop.up}]);
      }
    }
  }
  return most;
}

TEST(SssMst, ParallelingMovesChildrenOfTheSlowSenderWithinChannelLimits) {
  const NetworkModel net = Parse(kParallel);
  using Sent = std::map<std::string, std::vector<std::string>>;
  // One channel: no route has room, b1 serves its three children one after another.
  const Plan one = PlanOn(net, Channels(1));
  EXPECT_EQ(Sends(one), (Sent{{"s", {"nb", "na", "nc"}}, {"nb", {"nb1"}},
                              {"nb1", {"nbx", "nby", "nbz"}}}));
  // Two: c takes b1's second child; a would need a third path on b's downlink.
  const Plan two = PlanOn(net, Channels(2));
  EXPECT_EQ(Sends(two), (Sent{{"s", {"nb", "na", "nc"}}, {"nb", {"nb1"}},
                              {"nb1", {"nbx", "nbz"}}, {"nc", {"nby"}}}));
  EXPECT_LE(MaxLinkLoad(net, two), 2);
  // Three: both; equal weights s->u->b1, so S_H order (a before c) maps a to by, c to bz.
  const Plan three = PlanOn(net, Channels(3));
  EXPECT_EQ(Sends(three), (Sent{{"s", {"nb", "na", "nc"}}, {"nb", {"nb1"}}, {"nb1", {"nbx"}},
                                {"na", {"nby"}}, {"nc", {"nbz"}}}));
  EXPECT_LE(MaxLinkLoad(net, three), 3);
  // The default is two channels.
  EXPECT_EQ(Sends(PlanOn(net)), Sends(two));
}

TEST(SssMst, LeadersAndBinomialInsideASwitch) {
  // The source leads its switch although t uploads faster; r2 (fastest) leads the rack, then the
  // others by upload (r3, r4, then r0, r1): binomial over [r2, r3, r4, r0, r1], so the second
  // fastest (r3) heads the largest subtree.
  const NetworkModel net = Parse(R"(switches:
  - name: core
  - {name: rack, parent: core, uplink: 1gbit}
nodes:
  - {switch: core, names: [s], up: 10mbit}
  - {switch: core, names: [t], up: 1gbit}
  - {switch: rack, names: [r0, r1], up: 100mbit}
  - {switch: rack, names: [r2], up: 1gbit}
  - {switch: rack, names: [r3, r4], up: 500mbit}
)");
  using Sent = std::map<std::string, std::vector<std::string>>;
  EXPECT_EQ(Sends(PlanOn(net)),
            (Sent{{"s", {"r2", "t"}}, {"r2", {"r3", "r4", "r1"}}, {"r3", {"r0"}}}));
}

TEST(SssMst, RejectsBadChannelCountAndBrokenSwitchTrees) {
  NetworkModel net = Parse(kOrder);
  EXPECT_EQ(SssMstPlanner(Channels(0)).MakePlan(net, 10, PlanOptions()).status().code(),
            StatusCode::kInvalidArgument);
  net.switches[1].parent = 2;  // x under x1 under x: a cycle
  EXPECT_EQ(SssMstPlanner().MakePlan(net, 10, PlanOptions()).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
