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
  EXPECT_EQ(down.samples, 3 * 6);  // 1.5 s of 0.25 s bins per run
  EXPECT_LT(down.relative_spread, 0.1);

  const RateEstimate up = EstimateFlowRate(runs, b, a, {});
  EXPECT_NEAR(up.bps, 5e6, 0.5e6);

  // Per-node receive rate: 7 peers at 10 Mbit/s each, plus a share of what crosses.
  EXPECT_NEAR(EstimateReceiveRate(runs, a, {}).bps, 70e6 + 5e6 / 7, 7e6);
  EXPECT_NEAR(EstimateReceiveRate(runs, b, {}).bps, 70e6 + 50e6 / 8, 7.6e6);
}

TEST(BandwidthEstimateTest, OneRunReportsTheSpreadAboveItsRate) {
  testing::SyntheticNetwork net = testing::TwoSites();
  net.noise = 0.3;
  const std::vector<Observations> runs = {testing::SyntheticRun(net, "a-0", 7)};
  const RateEstimate r = EstimateFlowRate(runs, Set(net.clusters[0]), Set(net.clusters[1]), {});
  EXPECT_NEAR(r.bps, 50e6, 5e6);
  EXPECT_EQ(r.runs, 1);
  // Bins uniform in [0.7, 1] x 50 Mbit/s: the 6th of 40 is within a few percent of the largest.
  EXPECT_GT(r.relative_spread, 0);
  EXPECT_LT(r.relative_spread, 0.1);
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

Observations OneFlow(const std::vector<double>& mbit_per_bin) {
  Observations run;
  run.source = "s";
  run.payload_bytes = 1 << 30;
  run.piece_bytes = 1 << 20;
  run.bin_s = 0.25;
  run.members = {{.name = "s"}, {.name = "r"}};
  PairObservation p;
  p.from = "s";
  p.to = "r";
  for (double mbit : mbit_per_bin) p.bytes_per_bin.push_back(static_cast<uint64_t>(mbit * 1e6 / 8 * run.bin_s));
  for (uint64_t b : p.bytes_per_bin) p.bytes += b;
  p.blocks = (p.bytes + kObservationBlockBytes - 1) / kObservationBlockBytes;
  p.last_s = run.bin_s * static_cast<double>(mbit_per_bin.size());
  run.pairs.push_back(p);
  return run;
}

TEST(BandwidthEstimateTest, ASingleBurstBinDoesNotSetTheRate) {
  std::vector<double> bins(40, 40);
  bins[20] = 400;
  const RateEstimate r = EstimateFlowRate({OneFlow(bins)}, {"s"}, {"r"}, {});
  EXPECT_NEAR(r.bps, 40e6, 1);
  EXPECT_EQ(r.samples, 6);
}

TEST(BandwidthEstimateTest, AWideLinkSaturatedOnlyBrieflyShowsItsCapacity) {
  // 1.5 s at the 150 Mbit/s cap, 7.5 s of partial load: an average over "active" bins (at
  // least half the peak) would say 100 Mbit/s.
  std::vector<double> bins(6, 150);
  bins.insert(bins.end(), 30, 90);
  bins.insert(bins.end(), 4, 20);
  EXPECT_NEAR(EstimateFlowRate({OneFlow(bins)}, {"s"}, {"r"}, {}).bps, 150e6, 1e3);
  // Over runs the best counts: another run that never saturated the link does not lower it.
  const RateEstimate two = EstimateFlowRate({OneFlow(bins), OneFlow(std::vector<double>(40, 60))}, {"s"}, {"r"}, {});
  EXPECT_NEAR(two.bps, 150e6, 1e3);
  EXPECT_NEAR(two.relative_spread, (150.0 - 60) / 150, 1e-3);
  // Shorter than the sustained time: the flow's weakest busy bin.
  EXPECT_NEAR(EstimateFlowRate({OneFlow({100, 80, 120})}, {"s"}, {"r"}, {}).bps, 80e6, 1e3);
}

}  // namespace
}  // namespace gridcast
