#include "collectives/topology.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gridcast {
namespace {

constexpr const char* kTwoSites = R"(name: two-sites
switches:
  - name: core
  - name: lyon
    parent: core
    uplink: 400mbit
    latency: 5ms
  - name: nancy
    parent: core
    uplink: 100mbit
    uplink_up: 80mbit
    uplink_down: 120mbit
nodes:
  - switch: lyon
    count: 3
    up: 200mbit
    down: 1gbit
  - switch: nancy
    names: [nancy-a, nancy-b]
    up: 200mbit
    down: 200mbit
  - switch: lyon
    count: 1
source: lyon-1
)";

// Parses text expected to fail and returns the error message.
std::string ErrorOf(const std::string& text) {
  Result<NetworkModel> model = ParseTopology(text);
  EXPECT_FALSE(model.ok()) << text;
  if (model.ok()) return "";
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  return model.status().message();
}

TEST(ParseTopology, ReadsEveryField) {
  Result<NetworkModel> parsed = ParseTopology(kTwoSites);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const NetworkModel& m = *parsed;
  EXPECT_EQ(m.name, "two-sites");
  ASSERT_EQ(m.switches.size(), 3u);
  EXPECT_EQ(m.switches[0].name, "core");
  EXPECT_EQ(m.switches[0].parent, -1);
  EXPECT_TRUE(std::isinf(m.switches[0].uplink_up_bps));
  EXPECT_EQ(m.switches[1].parent, 0);
  EXPECT_DOUBLE_EQ(m.switches[1].uplink_up_bps, 400e6);
  EXPECT_DOUBLE_EQ(m.switches[1].uplink_down_bps, 400e6);
  EXPECT_DOUBLE_EQ(m.switches[1].latency_s, 0.005);
  // Asymmetric fields override the symmetric one in their direction.
  EXPECT_DOUBLE_EQ(m.switches[2].uplink_up_bps, 80e6);
  EXPECT_DOUBLE_EQ(m.switches[2].uplink_down_bps, 120e6);
  EXPECT_DOUBLE_EQ(m.switches[2].latency_s, 0);

  ASSERT_EQ(m.nodes.size(), 6u);
  // Numbering goes on across a switch's groups.
  EXPECT_EQ(m.nodes[0].name, "lyon-0");
  EXPECT_EQ(m.nodes[2].name, "lyon-2");
  EXPECT_EQ(m.nodes[3].name, "nancy-a");
  EXPECT_EQ(m.nodes[4].name, "nancy-b");
  EXPECT_EQ(m.nodes[5].name, "lyon-3");
  EXPECT_EQ(m.nodes[0].switch_index, 1);
  EXPECT_EQ(m.nodes[3].switch_index, 2);
  EXPECT_DOUBLE_EQ(m.nodes[0].up_bps, 200e6);
  EXPECT_DOUBLE_EQ(m.nodes[0].down_bps, 1e9);
  EXPECT_TRUE(std::isinf(m.nodes[5].up_bps));  // omitted = unshaped
  EXPECT_TRUE(std::isinf(m.nodes[5].down_bps));
  EXPECT_EQ(m.source, 1);
}

TEST(ParseTopology, SourceDefaultsToFirstNodeAndNameIsOptional) {
  Result<NetworkModel> m = ParseTopology("switches: [{name: s}]\nnodes: [{switch: s, count: 2}]\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source, 0);
  EXPECT_EQ(m->name, "");
  EXPECT_EQ(m->nodes[1].name, "s-1");
}

TEST(ParseTopology, SwitchMayBeListedBeforeItsParent) {
  Result<NetworkModel> m = ParseTopology(R"(switches:
  - name: core
  - name: leaf
    parent: mid
  - name: mid
    parent: core
nodes: [{switch: leaf, count: 1}]
)");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->switches[1].parent, 2);
  EXPECT_EQ(m->PathToRoot(1), (std::vector<int>{1, 2, 0}));
}

TEST(ParseTopology, UnknownParentNamesLineAndField) {
  std::string e = ErrorOf("switches:\n  - name: core\n  - name: a\n    parent: nowhere\n"
                          "nodes: [{switch: a, count: 1}]\n");
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  EXPECT_NE(e.find("switches[1].parent"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown parent switch 'nowhere'"), std::string::npos) << e;
}

TEST(ParseTopology, DuplicateNames) {
  std::string e = ErrorOf("switches:\n  - name: core\n  - name: core\n    parent: core\n"
                          "nodes: [{switch: core, count: 1}]\n");
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("duplicate name 'core'"), std::string::npos) << e;

  e = ErrorOf("switches: [{name: s}]\nnodes:\n  - switch: s\n    names: [a, b, a]\n");
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  EXPECT_NE(e.find("nodes[0].names[2]"), std::string::npos) << e;

  // Generated names collide with explicit ones too, and node names may not reuse switch names.
  e = ErrorOf("switches: [{name: s}]\nnodes:\n  - switch: s\n    names: [s-0]\n"
              "  - switch: s\n    count: 1\n");
  EXPECT_NE(e.find("duplicate name 's-0'"), std::string::npos) << e;
  e = ErrorOf("switches: [{name: s}]\nnodes: [{switch: s, names: [s]}]\n");
  EXPECT_NE(e.find("duplicate name 's'"), std::string::npos) << e;
}

TEST(ParseTopology, BadRateUnit) {
  std::string e = ErrorOf("switches: [{name: s}]\nnodes:\n  - switch: s\n    count: 1\n"
                          "    up: 100mbps\n");
  EXPECT_NE(e.find("line 5"), std::string::npos) << e;
  EXPECT_NE(e.find("nodes[0].up"), std::string::npos) << e;
  EXPECT_NE(e.find("bad rate unit"), std::string::npos) << e;
  e = ErrorOf("switches:\n  - name: c\n  - name: s\n    parent: c\n    uplink_down: fast\n"
              "nodes: [{switch: s, count: 1}]\n");
  EXPECT_NE(e.find("switches[1].uplink_down"), std::string::npos) << e;
  e = ErrorOf("switches:\n  - name: c\n  - name: s\n    parent: c\n    latency: 5min\n"
              "nodes: [{switch: s, count: 1}]\n");
  EXPECT_NE(e.find("switches[1].latency"), std::string::npos) << e;
}

TEST(ParseTopology, Cycle) {
  std::string e = ErrorOf(R"(switches:
  - name: core
  - name: a
    parent: b
  - name: b
    parent: a
nodes: [{switch: a, count: 1}]
)");
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  e = ErrorOf("switches:\n  - name: core\n  - name: a\n    parent: a\nnodes: [{switch: a, count: 1}]\n");
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
}

TEST(ParseTopology, EmptyNetwork) {
  EXPECT_NE(ErrorOf("").find("empty network"), std::string::npos);
  EXPECT_NE(ErrorOf("name: x\n").find("empty network"), std::string::npos);
  EXPECT_NE(ErrorOf("switches: [{name: s}]\n").find("empty network: no nodes"), std::string::npos);
  EXPECT_NE(ErrorOf("switches: [{name: s}]\nnodes: []\n").find("empty network"), std::string::npos);
  EXPECT_NE(ErrorOf("switches: []\nnodes: [{switch: s, count: 1}]\n").find("empty network"),
            std::string::npos);
}

TEST(ParseTopology, StructuralErrors) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"switches: [{name: s}]\nnodes: [{switch: s, count: 1}]\nbogus: 1\n", "topology.bogus: unknown field"},
      {"switches: [{name: s, colour: red}]\nnodes: [{switch: s, count: 1}]\n", "switches[0].colour: unknown field"},
      {"switches: [{name: s}]\nnodes: [{switch: s, count: 1, speed: 1}]\n", "nodes[0].speed: unknown field"},
      {"switches: [{parent: x}]\nnodes: [{switch: s, count: 1}]\n", "switches[0].name: missing"},
      {"switches: [{name: c, parent: c}]\nnodes: [{switch: c, count: 1}]\n", "root and has no parent"},
      {"switches: [{name: c, uplink: 1gbit}]\nnodes: [{switch: c, count: 1}]\n", "root switch has no uplink"},
      {"switches: [{name: c}, {name: d}]\nnodes: [{switch: c, count: 1}]\n", "switches[1].parent: missing"},
      {"switches: [{name: s}]\nnodes: [{switch: t, count: 1}]\n", "unknown switch 't'"},
      {"switches: [{name: s}]\nnodes: [{count: 1}]\n", "nodes[0].switch: missing"},
      {"switches: [{name: s}]\nnodes: [{switch: s}]\n", "exactly one of 'count' or 'names'"},
      {"switches: [{name: s}]\nnodes: [{switch: s, count: 1, names: [a]}]\n", "exactly one of"},
      {"switches: [{name: s}]\nnodes: [{switch: s, count: 0}]\n", "between 1 and 100000"},
      {"switches: [{name: s}]\nnodes: [{switch: s, count: many}]\n", "'many' is not an integer"},
      {"switches: [{name: s}]\nnodes: [{switch: s, names: []}]\n", "non-empty list"},
      {"switches: [{name: s}]\nnodes: [{switch: s, names: [a b]}]\n", "may only use letters"},
      {"switches: [{name: s}]\nnodes: [{switch: s, count: 1}]\nsource: z\n", "source: unknown node 'z'"},
      {"switches: {name: s}\nnodes: [{switch: s, count: 1}]\n", "switches: expected a list"},
      {"switches: [{name: s}]\nnodes: {switch: s}\n", "nodes: expected a list"},
      {"- a\n- b\n", "expected a mapping at the top level"},
      {"switches: [{name: s}\n", "yaml:"},
      {"switches: [{name: [s]}]\nnodes: [{switch: s, count: 1}]\n", "expected a scalar"},
  };
  for (const Case& c : cases) {
    std::string e = ErrorOf(c.text);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "input:\n" << c.text << "error: " << e;
    EXPECT_EQ(e.rfind("line ", 0), 0u) << "errors name the line: " << e;
  }
}

TEST(FormatTopology, RoundTrips) {
  Result<NetworkModel> first = ParseTopology(kTwoSites);
  ASSERT_TRUE(first.ok());
  std::string text = FormatTopology(*first);
  Result<NetworkModel> second = ParseTopology(text);
  ASSERT_TRUE(second.ok()) << second.status().ToString() << "\n" << text;
  ASSERT_EQ(second->nodes.size(), first->nodes.size());
  for (size_t i = 0; i < first->nodes.size(); ++i) {
    EXPECT_EQ(second->nodes[i].name, first->nodes[i].name);
    EXPECT_EQ(second->nodes[i].switch_index, first->nodes[i].switch_index);
    EXPECT_EQ(second->nodes[i].up_bps, first->nodes[i].up_bps);
    EXPECT_EQ(second->nodes[i].down_bps, first->nodes[i].down_bps);
  }
  for (size_t i = 0; i < first->switches.size(); ++i) {
    EXPECT_EQ(second->switches[i].parent, first->switches[i].parent);
    EXPECT_EQ(second->switches[i].uplink_up_bps, first->switches[i].uplink_up_bps);
    EXPECT_EQ(second->switches[i].uplink_down_bps, first->switches[i].uplink_down_bps);
    EXPECT_DOUBLE_EQ(second->switches[i].latency_s, first->switches[i].latency_s);
  }
  EXPECT_EQ(second->source, first->source);
  EXPECT_EQ(second->name, "two-sites");
}

TEST(NetworkModel, PathLatencyAddsTheUplinksCrossed) {
  Result<NetworkModel> m = ParseTopology(kTwoSites);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->PathLatencySeconds(0, 1), 0);      // same switch
  EXPECT_DOUBLE_EQ(m->PathLatencySeconds(0, 3), 0.005);  // lyon uplink + nancy uplink (0)
  EXPECT_EQ(m->NodesInSubtree(2), (std::vector<int>{3, 4}));
  EXPECT_EQ(m->NodesInSubtree(0).size(), 6u);
}

}  // namespace
}  // namespace gridcast
