// gridcast tomography on the two-sites netgrid (8 + 8 nodes, 100mbit NICs, uplinks 400mbit and
// 50mbit): `--runs auto --truth` finds the two sites exactly (ARI 1) and puts the lyon -> nancy
// bottleneck within 25% below and 35% above its shaped 50mbit (60% above under the sanitizers),
// below the 100mbit NICs. Above, because bins are counted where libtorrent reads the blocks: a
// receiver starved of CPU (16 daemons under ASan on two cores) reads a backlog from its socket
// buffer in bursts, and the estimator's busiest 1.5 s then read 65-66 mbit in 2 of 6 sanitizer
// runs here, 70.8 on a slower CI host (release builds: within 18%, docs/tomography.md). About
// 40-80 s; the netgrid is always torn down.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "deploy/netgrid.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr const char* kState = "/tmp/gridcast-tomography-e2e";

class TomographyE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "netgrid needs root (network namespaces); not root";
    ASSERT_TRUE(NetgridDown(kState).ok());  // what a killed run left
    fs::remove_all(kState);
  }
  void TearDown() override {
    if (geteuid() != 0) return;
    EXPECT_TRUE(NetgridDown(kState).ok());
    fs::remove_all(kState);
  }
};

TEST_F(TomographyE2ETest, TwoSitesAreFoundExactlyWithTheirBottleneck) {
  const std::string topology = std::string(GRIDCAST_TOPOLOGIES) + "/two-sites.yaml";
  Result<CommandOutput> up = RunCommand({GRIDCAST_CLI, "netgrid", "up", topology, "--daemons", "--state", kState});
  ASSERT_TRUE(up.ok() && up->exit_code == 0) << (up.ok() ? up->output : up.status().message());
  Result<CommandOutput> out = RunCommand({GRIDCAST_CLI, "tomography", "--cluster", std::string(kState) + "/cluster.yaml",
                                          "--runs", "auto", "--truth", topology, "--json"});
  ASSERT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : out.status().message());
  const size_t line = out->output.rfind("\n{");
  const nlohmann::json j =
      nlohmann::json::parse(out->output.substr(line == std::string::npos ? 0 : line + 1), nullptr, false);
  ASSERT_TRUE(j.is_object()) << out->output;
  EXPECT_EQ(j["truth"]["ari"].get<double>(), 1.0) << j.dump();
  ASSERT_EQ(j["clusters"].size(), 2u) << j.dump();
  // Clusters are sorted by size, then first name: lyon (holding lyon-0) first.
  EXPECT_EQ(j["clusters"][0][0], "lyon-0");
  const double lyon_to_nancy = j["inter_cluster_mbit"][0][1].get<double>();
  EXPECT_GT(lyon_to_nancy, 50 * 0.75) << j.dump();
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(lyon_to_nancy, 50 * 1.6) << j.dump();
#else
  EXPECT_LT(lyon_to_nancy, 50 * 1.35) << j.dump();
#endif
}

}  // namespace
}  // namespace gridcast
