// Rate estimates recover the rates the synthetic broadcasts were made from.
#include "tomography/bandwidth_estimate.h"

#include <gtest/gtest.h>

#include "tests/unit/tomography/synthetic.h"

namespace gridcast {
namespace {

std::set<std::string> Set(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

TEST(BandwidthEstimateTest, RecoversASaturatedUplink) {
  const testing::SyntheticNetwork net = testing::TwoSites();
  std::vector<Observations> runs;
  for (uint64_t seed : {1, 2, 3}) runs.push_back(testing::SyntheticRun(net, "a-0", seed));
  const auto a = Set(net.clusters[0]), b = Set(net.clusters[1]);

  const RateEstimate down = EstimateFlowRate(runs, a, b, {});
  EXPECT_NEAR(down.bps, 50e6, 5e6);
  EXPECT_EQ(down.runs, 3);
  EXPECT_EQ(down.samples, 3 * 40);  // 10 s of 0.25 s bins; the quarter-rate ramps are left out
  EXPECT_LT(down.relative_spread, 0.1);

  const RateEstimate up = EstimateFlowRate(runs, b, a, {});
  EXPECT_NEAR(up.bps, 5e6, 0.5e6);

  // Per-node receive rate: 7 peers at 10 Mbit/s each, plus a share of what crosses.
  EXPECT_NEAR(EstimateReceiveRate(runs, a, {}).bps, 70e6 + 5e6 / 7, 7e6);
  EXPECT_NEAR(EstimateReceiveRate(runs, b, {}).bps, 70e6 + 50e6 / 8, 7.6e6);
}

TEST(BandwidthEstimateTest, OneRunReportsTheBinSpread) {
  testing::SyntheticNetwork net = testing::TwoSites();
  net.noise = 0.3;
  const std::vector<Observations> runs = {testing::SyntheticRun(net, "a-0", 7)};
  const RateEstimate r = EstimateFlowRate(runs, Set(net.clusters[0]), Set(net.clusters[1]), {});
  EXPECT_NEAR(r.bps, 50e6, 5e6);
  EXPECT_EQ(r.runs, 1);
  // Uniform +-30% has a coefficient of variation of 0.3 / sqrt(3) = 0.17.
  EXPECT_NEAR(r.relative_spread, 0.17, 0.05);
}

TEST(BandwidthEstimateTest, NoFlowGivesAnEmptyEstimate) {
  testing::SyntheticNetwork net = testing::TwoSites();
  net.cross_bps = {{0, 0}, {0, 0}};
  const std::vector<Observations> runs = {testing::SyntheticRun(net, "a-0", 1)};
  const RateEstimate r = EstimateFlowRate(runs, Set(net.clusters[0]), Set(net.clusters[1]), {});
  EXPECT_EQ(r.bps, 0);
  EXPECT_EQ(r.runs, 0);
  EXPECT_EQ(r.samples, 0);
  EXPECT_EQ(EstimateFlowRate({}, Set(net.clusters[0]), Set(net.clusters[1]), {}).bps, 0);
}

TEST(BandwidthEstimateTest, ASingleSpikeDoesNotSetThePeak) {
  // 10 s at 40 Mbit/s with one bin at 10x: the 90th percentile ignores the spike, so the
  // steady bins stay active and the estimate stays near 40 Mbit/s.
  Observations run;
  run.source = "s";
  run.payload_bytes = 1 << 30;
  run.piece_bytes = 1 << 20;
  run.bin_s = 0.25;
  run.members = {{.name = "s"}, {.name = "r"}};
  PairObservation p;
  p.from = "s";
  p.to = "r";
  for (int k = 0; k < 40; ++k) p.bytes_per_bin.push_back(k == 20 ? 12500000 : 1250000);
  for (uint64_t b : p.bytes_per_bin) p.bytes += b;
  p.blocks = (p.bytes + kObservationBlockBytes - 1) / kObservationBlockBytes;
  p.last_s = 10;
  run.pairs.push_back(p);
  const RateEstimate r = EstimateFlowRate({run}, {"s"}, {"r"}, {});
  EXPECT_NEAR(r.bps, 40e6 * (39 + 10) / 40, 1);
  EXPECT_EQ(r.samples, 40);
}

}  // namespace
}  // namespace gridcast
