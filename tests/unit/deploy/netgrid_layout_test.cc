#include "deploy/netgrid_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "collectives/topology.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

bool HasCommand(const NetgridLayout& layout, const std::string& joined) {
  return std::any_of(layout.setup_commands.begin(), layout.setup_commands.end(),
                     [&](const auto& c) { return JoinCommand(c) == joined; });
}

NetworkModel Model(const char* text) {
  Result<NetworkModel> m = ParseTopology(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(NetgridAddress, RunsThroughTheBenchmarkRange) {
  EXPECT_EQ(NetgridAddress(0), "198.18.0.1");
  EXPECT_EQ(NetgridAddress(254), "198.18.0.255");
  EXPECT_EQ(NetgridAddress(255), "198.18.1.0");
  EXPECT_EQ(NetgridAddress(65535), "198.19.0.0");
}

TEST(PlanNetgrid, ShapesEveryDirectionOnItsEgress) {
  NetgridLayout layout = PlanNetgrid(Model(R"(switches:
  - name: core
  - name: far
    parent: core
    uplink_up: 40mbit
    uplink_down: 30mbit
    latency: 10ms
nodes:
  - switch: core
    count: 1
    up: 100mbit
    down: 50mbit
  - switch: far
    count: 1
)"), "gctest");
  ASSERT_EQ(layout.nodes.size(), 2u);
  EXPECT_EQ(layout.nodes[0].netns, "gctest-core-0");
  EXPECT_EQ(layout.nodes[1].netns, "gctest-far-0");
  EXPECT_EQ(layout.switch_netns, (std::vector<std::string>{"gctest-core", "gctest-far"}));
  EXPECT_TRUE(HasCommand(layout, "ip netns add gctest-core"));
  EXPECT_TRUE(HasCommand(layout, "ip -n gctest-far link add uplink type veth peer name down1 netns gctest-core"));
  // Node up = egress of its own eth0; node down = egress of the switch port toward it.
  EXPECT_TRUE(HasCommand(layout, "tc -n gctest-core-0 qdisc replace dev eth0 root tbf rate 100000000bit burst 131072 latency 50ms"));
  EXPECT_TRUE(HasCommand(layout, "tc -n gctest-core qdisc replace dev port0 root tbf rate 50000000bit burst 131072 latency 50ms"));
  // Uplink up = egress of the child end; uplink down = egress of the parent end.
  EXPECT_TRUE(HasCommand(layout, "tc -n gctest-far qdisc replace dev uplink root tbf rate 40000000bit burst 131072 latency 50ms"));
  EXPECT_TRUE(HasCommand(layout, "tc -n gctest-core qdisc replace dev down1 root tbf rate 30000000bit burst 131072 latency 50ms"));
  // Unshaped node: no qdisc on its devices.
  for (const auto& c : layout.setup_commands) {
    std::string joined = JoinCommand(c);
    EXPECT_EQ(joined.find("gctest-far-0 qdisc"), std::string::npos) << joined;
    EXPECT_EQ(joined.find("dev port1 root"), std::string::npos) << joined;
  }
  ASSERT_EQ(layout.notes.size(), 1u);
  EXPECT_NE(layout.notes[0].find("simulator only"), std::string::npos);
}

TEST(SlowNodeCommands, ShapeTheNodesOwnDevicesBothWays) {
  const NetworkModel model = Model(R"(switches:
  - name: core
  - name: far
    parent: core
    uplink: 40mbit
nodes:
  - switch: core
    count: 1
  - switch: far
    count: 2
    up: 100mbit
    down: 100mbit
)");
  const std::vector<std::vector<std::string>> commands = SlowNodeCommands(model, "gctest", 2, 10e6);
  ASSERT_EQ(commands.size(), 2u);
  // The same devices PlanNetgrid shapes, replaced on the live netgrid.
  EXPECT_EQ(JoinCommand(commands[0]), "tc -n gctest-far-1 qdisc replace dev eth0 root tbf rate 10000000bit burst 131072 latency 50ms");
  EXPECT_EQ(JoinCommand(commands[1]), "tc -n gctest-far qdisc replace dev port2 root tbf rate 10000000bit burst 131072 latency 50ms");
  const NetgridLayout layout = PlanNetgrid(model, "gctest");
  for (const auto& command : SlowNodeCommands(model, "gctest", 2, 100e6)) {
    EXPECT_TRUE(HasCommand(layout, JoinCommand(command))) << JoinCommand(command);
  }
}

TEST(PlanNetgrid, EveryNamespaceIsCreatedBeforeUse) {
  NetgridLayout layout = PlanNetgrid(Model(R"(switches:
  - name: core
  - name: a
    parent: b
  - name: b
    parent: core
nodes: [{switch: a, count: 2}, {switch: b, count: 1}]
)"), "gcx");
  std::set<std::string> created;
  for (const auto& c : layout.setup_commands) {
    if (c.size() == 4 && c[0] == "ip" && c[1] == "netns" && c[2] == "add") {
      created.insert(c[3]);
      continue;
    }
    ASSERT_GE(c.size(), 3u);
    EXPECT_TRUE(created.count(c[2])) << JoinCommand(c);
    auto peer = std::find(c.begin(), c.end(), "netns");
    if (peer != c.end() && peer + 1 != c.end()) {
      EXPECT_TRUE(created.count(*(peer + 1))) << JoinCommand(c);
    }
  }
  EXPECT_EQ(created.size(), 6u);
}

}  // namespace
}  // namespace gridcast
