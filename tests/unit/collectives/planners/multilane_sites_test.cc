// multilane-sites: the chain between sites (which uplink feeds the next site, with how many
// streams), the site order, the no-spare-in-one-tree case, and equality with multilane on one
// site.
#include "collectives/planners/multilane_sites.h"

#include <gtest/gtest.h>

#include <map>

#include "collectives/planners/multilane.h"
#include "collectives/topology.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

struct Children {
  std::vector<int> members;
  std::vector<int> streams;
  bool operator==(const Children&) const = default;
};
using Edges = std::map<int, Children>;  // parent -> children in send order

Edges EdgesOf(const Lane& lane) {
  Edges edges;
  for (const Fanout& f : lane.fanouts) edges[f.parent] = {f.children, f.streams};
  return edges;
}

// Two sites under a core; `first` nodes (the source first) in s1, `second` in s2.
NetworkModel TwoSites(int first, int second) {
  const std::string yaml = "switches:\n"
                           "  - name: core\n"
                           "  - {name: s1, parent: core, uplink: 1gbit}\n"
                           "  - {name: s2, parent: core, uplink: 100mbit}\n"
                           "nodes:\n"
                           "  - {switch: s1, count: " + std::to_string(first) + "}\n"
                           "  - {switch: s2, count: " + std::to_string(second) + "}\n";
  Result<NetworkModel> net = ParseTopology(yaml);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return *net;
}

Plan PlanOn(const NetworkModel& net, int streams = 1) {
  PlanOptions options;
  options.chunk_bytes = 10;
  options.streams = streams;
  Result<Plan> plan = MultiLaneSitesPlanner().MakePlan(net, 1000, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(ValidatePlanOn(*plan, net).ok()) << ValidatePlanOn(*plan, net).ToString();
  return *plan;
}

TEST(MultiLaneSites, ChainsTheLastLeavesToTheNextSitesRoots) {
  // Site 1: node 0 plus the p = 7 shape (A = 1..3, B = 4..6; spares A_3 = 3, B_3 = 6). Site 2:
  // A = 7..9, B = 10..12, fed over the WAN by 3 (lane A) and 6 (lane B) with one stream (no latency: nothing to fill).
  const Plan plan = PlanOn(TwoSites(7, 6));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA]),
            (Edges{{0, {{1}, {}}}, {1, {{2, 3}, {}}}, {2, {{4, 5}, {}}}, {3, {{6, 7}, {1, 1}}},
                   {7, {{8, 9}, {}}}, {8, {{10, 11}, {}}}, {9, {{12}, {}}}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB]),
            (Edges{{0, {{4}, {}}}, {4, {{5, 6}, {}}}, {5, {{1, 2}, {}}}, {6, {{3, 10}, {1, 1}}},
                   {10, {{11, 12}, {}}}, {11, {{7, 8}, {}}}, {12, {{9}, {}}}}));
}

TEST(MultiLaneSites, WanStreamsFollowTheOptionAboveTheFloor) {
  const Plan plan = PlanOn(TwoSites(7, 6), 8);
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA])[3], (Children{{6, 7}, {8, 8}}));
  EXPECT_EQ(plan.lanes[kLaneA].streams, 8);
}

TEST(MultiLaneSites, LongFatPipesGetStreamsForTheirBandwidthDelayProduct) {
  // 1gbit with 50 ms each way: 12.5 MB in flight needs 3 windows of 4 MiB; no latency needs 1.
  Result<NetworkModel> net = ParseTopology(
      "switches:\n  - name: core\n  - {name: s1, parent: core, uplink: 10gbit}\n"
      "  - {name: s2, parent: core, uplink: 1gbit, latency: 50ms}\n"
      "nodes:\n  - {switch: s1, count: 4}\n  - {switch: s2, count: 4}\n");
  ASSERT_TRUE(net.ok());
  EXPECT_EQ(MultiLaneSitesPlanner::WanStreams(*net, 1, 2, 1), 3);
  EXPECT_EQ(MultiLaneSitesPlanner::WanStreams(*net, 1, 2, 5), 5);  // the caller's floor
  EXPECT_EQ(MultiLaneSitesPlanner::WanStreams(TwoSites(2, 2), 1, 2, 1), 1);
}

TEST(MultiLaneSites, BothStreamsLeaveFromTreeAWhenTreeBHasNoSpare) {
  // Site 1 has N = 5: both spares are on A_3 = 3 (B_1 serves the left-out A_3). A_3 holds both
  // halves, so it feeds site 2's A_1 = 6 with lane A and B_1 = 8 with lane B.
  const Plan plan = PlanOn(TwoSites(6, 3));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA])[3], (Children{{6}, {1}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB])[3], (Children{{8}, {1}}));
  // Site 2 (A = 6, 7; B = 8) runs its own swap.
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA])[6], (Children{{7}, {}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA])[7], (Children{{8}, {}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB])[8], (Children{{6, 7}, {}}));
}

TEST(MultiLaneSites, SourceAloneInItsSiteFeedsTheNextSite) {
  const Plan plan = PlanOn(TwoSites(1, 4));  // site 2: A = 1, 2; B = 3, 4
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneA])[0], (Children{{1}, {1}}));
  EXPECT_EQ(EdgesOf(plan.lanes[kLaneB])[0], (Children{{3}, {1}}));
}

TEST(MultiLaneSites, SitesFollowTheWidestBottleneckGreedily) {
  // From x: y is behind 100 Mbit/s, z 500, zr min(500, 200) = 200 -> z. From z: zr 200, y 100.
  Result<NetworkModel> net = ParseTopology(R"(switches:
  - name: core
  - {name: x, parent: core, uplink: 1gbit}
  - {name: y, parent: core, uplink: 100mbit}
  - {name: z, parent: core, uplink: 500mbit}
  - {name: zr, parent: z, uplink: 200mbit}
nodes:
  - {switch: y, count: 2}
  - {switch: zr, count: 2}
  - {switch: z, count: 2}
  - {switch: x, count: 2}
source: x-0
)");
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  // Ranks: x-0 (source), then model order: y-0, y-1, zr-0, zr-1, z-0, z-1, x-1.
  EXPECT_EQ(MultiLaneSitesPlanner::SiteOrder(*net, {1, 2, 2, 4, 4, 3, 3, 1}),
            (std::vector<int>{1, 3, 4, 2}));
  // So y's site (A_1 = y-0 = rank 1) is fed last, from zr's site (ranks 3, 4).
  const Plan plan = PlanOn(*net);
  EXPECT_EQ(plan.lanes[kLaneA].ParentOf(1), 3);
  EXPECT_EQ(plan.lanes[kLaneB].ParentOf(2), 4);
}

TEST(MultiLaneSites, EqualsMultiLaneOnOneSite) {
  for (int p : {1, 2, 3, 6, 7, 23, 64}) {
    NetworkModel net;
    net.switches.push_back({"core", -1});
    for (int i = 0; i < p; ++i) net.nodes.push_back({"n" + std::to_string(i), 0});
    const Plan sites = PlanOn(net);
    PlanOptions options;
    options.chunk_bytes = 10;
    Result<Plan> single = MultiLanePlanner().MakePlan(net, 1000, options);
    ASSERT_TRUE(single.ok());
    EXPECT_EQ(sites.members, single->members);
    ASSERT_EQ(sites.lanes.size(), single->lanes.size());
    for (size_t l = 0; l < sites.lanes.size(); ++l) {
      EXPECT_EQ(EdgesOf(sites.lanes[l]), EdgesOf(single->lanes[l])) << "p=" << p;
      EXPECT_EQ(sites.lanes[l].chunks[0].begin, single->lanes[l].chunks[0].begin);
      EXPECT_EQ(sites.lanes[l].chunks[0].step, single->lanes[l].chunks[0].step);
      EXPECT_EQ(sites.lanes[l].streams, single->lanes[l].streams);
    }
  }
}

TEST(MultiLaneSites, TwoUploadsPerMemberAcrossSites) {
  for (int a = 1; a <= 9; ++a) {
    for (int b = 1; b <= 9; ++b) {
      for (int c : {0, 1, 4}) {
        NetworkModel net;
        net.switches = {
            {"core", -1}, {"s1", 0, 1e9, 1e9}, {"s2", 0, 1e8, 1e8}, {"s3", 0, 5e8, 5e8}};
        for (int i = 0; i < a + b + c; ++i) {
          net.nodes.push_back({"n" + std::to_string(i), i < a ? 1 : i < a + b ? 2 : 3});
        }
        const Plan plan = PlanOn(net);
        std::vector<int> uploads(plan.members.size(), 0);
        for (const Lane& lane : plan.lanes) {
          for (const Fanout& f : lane.fanouts) {
            uploads[f.parent] += static_cast<int>(f.children.size());
          }
        }
        for (size_t m = 0; m < uploads.size(); ++m) {
          EXPECT_LE(uploads[m], 2) << a << "/" << b << "/" << c << " member " << m;
        }
      }
    }
  }
}

TEST(MultiLaneSites, RejectsNodesOnMissingSwitches) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  net.nodes = {{"n0", 0}, {"n1", 3}};
  EXPECT_EQ(MultiLaneSitesPlanner().MakePlan(net, 10, PlanOptions()).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
