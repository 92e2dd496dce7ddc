// The host list of `gridcast cluster init`, the members and topology made of it, and add-host's
// edit of a topology file.
#include "client/cli/cluster_init.h"

#include <gtest/gtest.h>

#include <cmath>

#include "collectives/topology.h"

namespace gridcast {
namespace {

TEST(ClusterInitTest, HostsAreNamedBySiteOrByTheList) {
  Result<std::vector<ClusterHost>> hosts = ParseHostList(
      "# two sites\n"
      "lyon-0.grid.example.org\n"
      "  lyon-1.grid.example.org   # a comment\n"
      "\n"
      "10.2.0.7 nancy-7\n"
      "10.2.0.8 n8 nancy\n"
      "fd00::9 nancy-9\n",
      {"lyon", "nancy"});
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  ASSERT_EQ(hosts->size(), 5u);
  EXPECT_EQ((*hosts)[0].name, "lyon-0");
  EXPECT_EQ((*hosts)[0].site, "lyon");
  EXPECT_EQ((*hosts)[1].host, "lyon-1.grid.example.org");
  EXPECT_EQ((*hosts)[2].name, "nancy-7");
  EXPECT_EQ((*hosts)[2].site, "nancy");
  EXPECT_EQ((*hosts)[3].name, "n8");
  EXPECT_EQ((*hosts)[3].site, "nancy");

  ClusterMember v6 = MemberFor((*hosts)[4], ClusterPorts{});
  EXPECT_EQ(v6.control_address, "[fd00::9]:7700");
  EXPECT_EQ(v6.data_address, "[fd00::9]:7701");
  EXPECT_EQ(v6.bt_address, "");
  ClusterMember custom = MemberFor((*hosts)[0], ClusterPorts{9000, 9001, 9100});
  EXPECT_EQ(custom.control_address, "lyon-0.grid.example.org:9000");
  EXPECT_EQ(custom.bt_address, "lyon-0.grid.example.org:9100");

  Result<std::vector<ClusterHost>> flat = ParseHostList("a.example\nb.example\n", {});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ((*flat)[1].name, "b");
  EXPECT_TRUE((*flat)[1].site.empty());
}

TEST(ClusterInitTest, AListThatCannotBeACLusterSaysWhere) {
  auto error = [](std::string_view text, std::vector<std::string> sites = {}) {
    Result<std::vector<ClusterHost>> hosts = ParseHostList(text, sites);
    return hosts.ok() ? std::string("accepted") : hosts.status().message();
  };
  EXPECT_EQ(error("a.example\n10.0.0.1\n"), "line 2: the address 10.0.0.1 needs a member name after it (HOST NAME)");
  EXPECT_EQ(error("a.example\nb.example a\n"), "line 2: a second member named 'a'");
  EXPECT_EQ(error("a.example\na.example b\n"), "line 2: host a.example again");
  EXPECT_EQ(error("a.example x s1\nb.example y\n"), "line 2: name a site for every host or for none");
  EXPECT_EQ(error("lyon-1.x\nrennes-1.x\n", {"lyon", "nancy"}),
            "line 2: member 'rennes-1' starts with none of the sites' names; name its site (HOST NAME SITE)");
  EXPECT_NE(error("bad_host!\n").find("line 1: 'bad_host!' is not a host name or address"), std::string::npos);
  EXPECT_NE(error("a.example a/b\n").find("member name 'a/b'"), std::string::npos);
  EXPECT_NE(error("a.example a core\n").find("is not 'core'"), std::string::npos);
  EXPECT_NE(error("a b c d\n").find("expected HOST [NAME [SITE]]"), std::string::npos);
  EXPECT_EQ(error("# nothing\n\n"), "the host list names no host");
}

TEST(ClusterInitTest, TheSkeletonIsATopologyOfTheHostsWithoutRates) {
  Result<std::vector<ClusterHost>> hosts =
      ParseHostList("lyon-0.x\nlyon-1.x\nnancy-0.x\nnancy-1.x\nlyon-2.x\n", {"lyon", "nancy"});
  ASSERT_TRUE(hosts.ok());
  Result<NetworkModel> model = ParseTopology(TopologySkeleton("grid", *hosts));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->name, "grid");
  ASSERT_EQ(model->switches.size(), 3u);
  EXPECT_EQ(model->switches[0].name, "core");
  ASSERT_EQ(model->nodes.size(), 5u);
  const int lyon = *model->FindSwitch("lyon");
  EXPECT_EQ(model->nodes[*model->FindNode("lyon-2")].switch_index, lyon);
  EXPECT_EQ(model->nodes[*model->FindNode("nancy-1")].switch_index, *model->FindSwitch("nancy"));
  EXPECT_FALSE(std::isfinite(model->nodes[0].up_bps));

  Result<NetworkModel> flat = ParseTopology(TopologySkeleton("one", *ParseHostList("a.x\nb.x\n", {})));
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(flat->switches.size(), 1u);
  EXPECT_EQ(flat->nodes.size(), 2u);
}

TEST(ClusterInitTest, AddHostKeepsTheFileAndItsComments) {
  const std::string topology =
      "# hand-tuned rates\n"
      "name: grid\n"
      "switches:\n"
      "- name: core\n"
      "- name: lyon\n"
      "  parent: core\n"
      "  uplink: 1gbit   # measured\n"
      "nodes:\n"
      "- switch: lyon\n"
      "  names: [lyon-0]\n"
      "  up: 10gbit\n"
      "\n"
      "# the default source\n"
      "source: lyon-0\n";
  Result<std::string> added = AddHostToTopology(topology, ClusterHost{"lyon-1.x", "lyon-1", "lyon"});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_NE(added->find("uplink: 1gbit   # measured\n"), std::string::npos);
  EXPECT_NE(added->find("# the default source\nsource: lyon-0\n"), std::string::npos);
  Result<NetworkModel> model = ParseTopology(*added);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->nodes[*model->FindNode("lyon-1")].switch_index, *model->FindSwitch("lyon"));

  Result<std::string> new_site = AddHostToTopology(*added, ClusterHost{"rennes-0.x", "rennes-0", "rennes"});
  ASSERT_TRUE(new_site.ok()) << new_site.status().ToString();
  model = ParseTopology(*new_site);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::optional<int> rennes = model->FindSwitch("rennes");
  ASSERT_TRUE(rennes);
  EXPECT_EQ(model->switches[*rennes].parent, 0);
  EXPECT_EQ(model->nodes[*model->FindNode("rennes-0")].switch_index, *rennes);

  Result<std::string> again = AddHostToTopology(*new_site, ClusterHost{"other.x", "lyon-1", "lyon"});
  ASSERT_FALSE(again.ok());
  Result<std::string> flow = AddHostToTopology("switches: [{name: core}]\nnodes: [{switch: core, names: [a]}]\n",
                                               ClusterHost{"b.x", "b", ""});
  ASSERT_FALSE(flow.ok());
  EXPECT_NE(flow.status().message().find("no block list 'nodes:'"), std::string::npos);
}

}  // namespace
}  // namespace gridcast
