// capacity: efficiency against the physical bound on heterogeneous NICs (the issue's target:
// >= 0.90 and above multilane), who gets children, and one crossing per lane per uplink.
#include "collectives/planners/capacity.h"

#include <gtest/gtest.h>

#include "collectives/bound.h"
#include "collectives/planners/multilane.h"
#include "collectives/simulator/simulator.h"
#include "collectives/topology.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// deploy/topologies/mixed-nics.yaml
constexpr const char* kMixedNics = R"(switches:
  - name: core
nodes:
  - {switch: core, names: [fast-0, fast-1, fast-2, fast-3], up: 300mbit, down: 300mbit}
  - {switch: core, count: 8, up: 100mbit, down: 100mbit}
  - {switch: core, names: [slow-0, slow-1, slow-2, slow-3], up: 30mbit, down: 100mbit}
source: fast-0
)";

// deploy/topologies/two-sites.yaml
constexpr const char* kTwoSites = R"(switches:
  - name: core
  - {name: lyon, parent: core, uplink: 400mbit, latency: 5ms}
  - {name: nancy, parent: core, uplink: 50mbit, latency: 5ms}
nodes:
  - {switch: lyon, count: 8, up: 100mbit, down: 100mbit}
  - {switch: nancy, count: 8, up: 100mbit, down: 100mbit}
source: lyon-0
)";

NetworkModel Parse(const char* yaml) {
  Result<NetworkModel> net = ParseTopology(yaml);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return *net;
}

double Efficiency(const Planner& planner, const NetworkModel& net) {
  Result<Plan> plan = planner.MakePlan(net, kGiB, PlanOptions());
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  Result<SimResult> sim = SimulatePlan(*plan, net, SimOptions());
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  return BroadcastBoundSeconds(net, net.source, {}, kGiB) / sim->completion_s;
}

int ChildrenOf(const Plan& plan, const std::string& member) {
  int children = 0;
  for (const Lane& lane : plan.lanes) {
    for (const Fanout& f : lane.fanouts) {
      if (plan.members[f.parent] == member) children += static_cast<int>(f.children.size());
    }
  }
  return children;
}

TEST(Capacity, MixedNicsNearTheBoundAndAboveMultilane) {
  const NetworkModel net = Parse(kMixedNics);
  const double capacity = Efficiency(CapacityPlanner(), net);
  const double multilane = Efficiency(MultiLanePlanner(), net);
  EXPECT_GE(capacity, 0.90);
  EXPECT_GT(capacity, multilane);
}

TEST(Capacity, FastUploadersServeMoreAndSlowOnesStayLeaves) {
  const NetworkModel net = Parse(kMixedNics);
  Result<Plan> plan = CapacityPlanner().MakePlan(net, kGiB, PlanOptions());
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(ValidatePlanOn(*plan, net).ok());
  EXPECT_FALSE(plan->rationale.empty());
  // Every receiver downloads at most 100mbit, so k lanes run at no more than 100/k mbit each
  // and a member may serve up(v) / (100/k) children over all lanes: 3k for fast members, k for
  // ordinary ones and 0.3k for slow ones, which are leaves in most lanes.
  const int k = static_cast<int>(plan->lanes.size());
  for (const Node& node : net.nodes) {
    EXPECT_LE(ChildrenOf(*plan, node.name), static_cast<int>(node.up_bps / 100e6 * k)) << node.name;
  }
  EXPECT_GE(ChildrenOf(*plan, "fast-1"), ChildrenOf(*plan, "core-0"));
  EXPECT_GE(ChildrenOf(*plan, "core-0"), ChildrenOf(*plan, "slow-0"));
}

TEST(Capacity, EachUplinkCrossedOncePerLane) {
  const NetworkModel net = Parse(kTwoSites);
  Result<Plan> plan = CapacityPlanner().MakePlan(net, kGiB, PlanOptions());
  ASSERT_TRUE(plan.ok());
  for (const Lane& lane : plan->lanes) {
    int crossings = 0;
    for (const Fanout& f : lane.fanouts) {
      const int from = net.nodes[*net.FindNode(plan->members[f.parent])].switch_index;
      for (int child : f.children) {
        crossings += net.nodes[*net.FindNode(plan->members[child])].switch_index != from;
      }
    }
    EXPECT_EQ(crossings, 1);
  }
  EXPECT_GE(Efficiency(CapacityPlanner(), net), 0.95);
}

TEST(Capacity, SlowSourceFeedsOneChildPerLane) {
  NetworkModel net = Parse(kMixedNics);
  net.source = *net.FindNode("slow-0");
  Result<Plan> plan = CapacityPlanner().MakePlan(net, kGiB, PlanOptions());
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(ValidatePlanOn(*plan, net).ok());
  EXPECT_EQ(ChildrenOf(*plan, "slow-0"), static_cast<int>(plan->lanes.size()));
  EXPECT_GE(Efficiency(CapacityPlanner(), net), 0.90);
}

}  // namespace
}  // namespace gridcast
