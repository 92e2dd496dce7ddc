// The inferred network reads back through ParseTopology; the ground truth of the repository's
// topology files.
#include "tomography/inferred_topology.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "collectives/topology.h"

namespace gridcast {
namespace {

NetworkModel ParseFile(const std::string& file) {
  std::ifstream in(std::string(GRIDCAST_TOPOLOGIES) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  Result<NetworkModel> model = ParseTopology(text.str());
  EXPECT_TRUE(model.ok()) << file << ": " << model.status().ToString();
  return model.ok() ? *model : NetworkModel();
}

std::vector<size_t> Sizes(const Partition& p) {
  std::vector<size_t> sizes;
  for (const auto& c : p.clusters) sizes.push_back(c.size());
  return sizes;
}

TEST(InferredTopologyTest, RoundTripsThroughTheTopologyFormat) {
  const std::vector<InferredCluster> clusters = {
      {{"lyon-0", "lyon-1", "lyon-2"}, 94.3e6, 48.7e6},
      {{"nancy-0", "nancy-1"}, 91.0004e6, 49.2e6},
      {{"cluster-3"}, 0, kUnshaped},  // a node named like a switch; no rates measured
  };
  Result<NetworkModel> model = InferNetworkModel(clusters, {"ghost"}, "lyon-1", "inferred");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->switches.size(), 4u);
  EXPECT_EQ(model->switches[3].name, "tomo-cluster-3");
  EXPECT_EQ(model->switches[1].uplink_up_bps, 48.7e6);
  EXPECT_EQ(model->switches[2].uplink_down_bps, 49.2e6);
  EXPECT_EQ(model->nodes[3].up_bps, 91e6);  // whole kbit/s
  EXPECT_EQ(model->nodes[5].down_bps, kUnshaped);
  EXPECT_EQ(model->nodes[6].name, "ghost");
  EXPECT_EQ(model->nodes[6].switch_index, 0);
  EXPECT_EQ(model->nodes[model->source].name, "lyon-1");

  const std::string yaml = FormatTopology(*model);
  Result<NetworkModel> back = ParseTopology(yaml);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << yaml;
  ASSERT_EQ(back->nodes.size(), model->nodes.size());
  for (size_t i = 0; i < model->nodes.size(); ++i) {
    EXPECT_EQ(back->nodes[i].name, model->nodes[i].name);
    EXPECT_EQ(back->nodes[i].switch_index, model->nodes[i].switch_index);
    EXPECT_DOUBLE_EQ(back->nodes[i].up_bps, model->nodes[i].up_bps);
    EXPECT_DOUBLE_EQ(back->nodes[i].down_bps, model->nodes[i].down_bps);
  }
  for (size_t s = 0; s < model->switches.size(); ++s) {
    EXPECT_EQ(back->switches[s].name, model->switches[s].name);
    EXPECT_DOUBLE_EQ(back->switches[s].uplink_up_bps, model->switches[s].uplink_up_bps);
  }
  EXPECT_EQ(back->source, model->source);
  // The ground truth of the inferred network is the clusters it was made from (the ghost on
  // the root joins the unshaped cluster-3 piece).
  EXPECT_EQ(TruthFromTopology(*back).clusters.size(), 3u);
}

TEST(InferredTopologyTest, RejectsNamesATopologyFileCannotHold) {
  EXPECT_NE(InferNetworkModel({{{"host:7000"}, 1e6, 1e6}}, {}, "", "x")
                .status()
                .message()
                .find("host:7000"),
            std::string::npos);
  EXPECT_NE(
      InferNetworkModel({{{"a", "b"}, 1e6, 1e6}}, {"a"}, "", "x").status().message().find("twice"),
      std::string::npos);
  EXPECT_FALSE(InferNetworkModel({}, {}, "", "x").ok());
}

TEST(InferredTopologyTest, TruthOfTheRepositoryTopologies) {
  const Partition two_sites = TruthFromTopology(ParseFile("two-sites.yaml"));
  EXPECT_EQ(Sizes(two_sites), (std::vector<size_t>{8, 8}));
  EXPECT_EQ(two_sites.clusters[0].front(), "lyon-0");
  EXPECT_EQ(two_sites.clusters[1].front(), "nancy-0");
  EXPECT_EQ(Sizes(TruthFromTopology(ParseFile("flat16.yaml"))), std::vector<size_t>{16});
  EXPECT_EQ(Sizes(TruthFromTopology(ParseFile("mixed-nics.yaml"))), std::vector<size_t>{16});
  // Unshaped site uplinks are no bottleneck: one logical cluster.
  EXPECT_EQ(Sizes(TruthFromTopology(ParseFile("paper-ml-2x16.yaml"))), std::vector<size_t>{32});
  EXPECT_EQ(Sizes(TruthFromTopology(ParseFile("paper-ml-32.yaml"))), std::vector<size_t>{32});
}

TEST(InferredTopologyTest, TruthCutsOnlyBottlenecks) {
  // Two racks of 4 x 100 Mbit/s: rack-a's 1 Gbit/s uplink carries them all (no cut), rack-b's
  // 250 Mbit/s does not; site-2 sits behind 50 Mbit/s. The file lists a child before its parent.
  Result<NetworkModel> model = ParseTopology(R"(switches:
  - name: core
  - {name: rack-a, parent: site-1, uplink: 1gbit}
  - {name: site-1, parent: core, uplink: 400mbit}
  - {name: rack-b, parent: site-1, uplink: 250mbit}
  - {name: site-2, parent: core, uplink: 50mbit}
nodes:
  - {switch: rack-a, count: 4, up: 100mbit, down: 100mbit}
  - {switch: rack-b, count: 4, up: 100mbit, down: 100mbit}
  - {switch: site-2, count: 3, up: 100mbit, down: 100mbit}
  - {switch: core, names: [lonely], up: 100mbit, down: 100mbit}
)");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Partition truth = TruthFromTopology(*model);
  EXPECT_EQ(truth, (Partition{{{"rack-a-0", "rack-a-1", "rack-a-2", "rack-a-3"},
                               {"rack-b-0", "rack-b-1", "rack-b-2", "rack-b-3"},
                               {"site-2-0", "site-2-1", "site-2-2"},
                               {"lonely"}}}));
}

}  // namespace
}  // namespace gridcast
