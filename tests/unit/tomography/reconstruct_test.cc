// Reconstruct end to end on synthetic broadcasts: the planted clusters, the bottleneck rates,
// flagged nodes, stability after each run, the CLI's JSON and the inferred network.
#include "tomography/reconstruct.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collectives/topology.h"
#include "tests/unit/tomography/synthetic.h"
#include "tomography/inferred_topology.h"

namespace gridcast {
namespace {

std::vector<Observations> TwoSiteRuns(int count) {
  std::vector<Observations> runs;
  for (int r = 0; r < count; ++r)
    runs.push_back(testing::SyntheticRun(testing::TwoSites(), "a-0", r + 1));
  return runs;
}

TEST(ReconstructTest, FindsTheSitesAndTheBottleneck) {
  Result<TomographyResult> result = Reconstruct(TwoSiteRuns(3), {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const testing::SyntheticNetwork net = testing::TwoSites();
  EXPECT_EQ(result->clusters, net.clusters);
  EXPECT_TRUE(result->flagged.empty());
  EXPECT_EQ(result->source, "a-0");
  ASSERT_EQ(result->inter_cluster_bps.size(), 2u);
  EXPECT_EQ(result->inter_cluster_bps[0][0], 0);
  EXPECT_NEAR(result->inter_cluster_bps[0][1], 50e6, 5e6);
  EXPECT_NEAR(result->inter_cluster_bps[1][0], 5e6, 0.5e6);
  EXPECT_EQ(result->inter_cluster[0][1].runs, 3);
  EXPECT_NEAR(result->intra_cluster_bps[1], 76.25e6, 7.6e6);
  EXPECT_NEAR(result->egress[0].bps, 50e6, 5e6);
  EXPECT_NEAR(result->ingress[1].bps, 50e6, 5e6);
  ASSERT_EQ(result->after_each_run.size(), 3u);
  EXPECT_TRUE(result->stability.stable) << result->stability.reason;
  EXPECT_FALSE(result->decisions.empty());
  EXPECT_EQ(result->decisions.front().rfind("depth 0 [a-0, a-1", 0), 0u)
      << result->decisions.front();
}

TEST(ReconstructTest, FlaggedNodesStayOutOfClusters) {
  std::vector<Observations> runs = TwoSiteRuns(2);
  for (Observations& run : runs) run.members.push_back({.name = "silent"});
  Result<TomographyResult> result = Reconstruct(runs, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->flagged.size(), 1u);
  EXPECT_EQ(result->flagged[0].name, "silent");
  for (const auto& cluster : result->clusters) {
    EXPECT_EQ(std::find(cluster.begin(), cluster.end(), "silent"), cluster.end());
  }
  EXPECT_FALSE(result->stability.stable);  // two runs are not enough
}

TEST(ReconstructTest, JsonHasExactlyTheCliFields) {
  Result<TomographyResult> result = Reconstruct(TwoSiteRuns(1), {});
  ASSERT_TRUE(result.ok());
  const std::string text = TomographyJson(*result, 12.5);
  EXPECT_EQ(text.rfind("{\"clusters\":[[\"a-0\",", 0), 0u) << text;
  const nlohmann::json json = nlohmann::json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"clusters", "inter_cluster_mbit", "intra_cluster_mbit",
                                            "runs", "seconds"}));
  EXPECT_NEAR(json["inter_cluster_mbit"][0][1].get<double>(), 50, 5);
  EXPECT_EQ(json["intra_cluster_mbit"].size(), 2u);
  EXPECT_EQ(json["runs"], 1);
  EXPECT_EQ(json["seconds"], 12.5);
}

TEST(ReconstructTest, InferredNetworkParsesBack) {
  Result<TomographyResult> result = Reconstruct(TwoSiteRuns(2), {});
  ASSERT_TRUE(result.ok());
  Result<NetworkModel> model = InferredNetwork(*result);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Result<NetworkModel> back = ParseTopology(FormatTopology(*model));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->switches.size(), 3u);
  // Both clusters' uplinks carry the 50 Mbit/s bottleneck, the larger direction of each.
  EXPECT_NEAR(back->switches[1].uplink_up_bps, 50e6, 5e6);
  EXPECT_NEAR(back->switches[2].uplink_down_bps, 50e6, 5e6);
  EXPECT_EQ(back->nodes[back->source].name, "a-0");
  // The network's own ground truth is the reconstruction (its uplinks are bottlenecks).
  EXPECT_EQ(TruthFromTopology(*back).clusters, result->clusters);
}

TEST(ReconstructTest, EmptyAndInvalidInput) {
  Result<TomographyResult> none = Reconstruct({}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->clusters.empty());
  EXPECT_EQ(
      TomographyJson(*none, 0),
      R"({"clusters":[],"inter_cluster_mbit":[],"intra_cluster_mbit":[],"runs":0,"seconds":0.0})");
  std::vector<Observations> runs = TwoSiteRuns(1);
  runs[0].pairs[0].last_s = -1;
  EXPECT_EQ(Reconstruct(runs, {}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
