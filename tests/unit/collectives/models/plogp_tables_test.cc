// [PVM04] Tables 1 and 2 (algorithms.md 5.2) with g(x) = 100 µs + x·80 ns (≈100 Mb/s Ethernet)
// and L = 50 µs; expected values computed by hand.
#include "collectives/models/plogp_tables.h"

#include <gtest/gtest.h>

namespace gridcast::models {
namespace {

PLogPParams Ethernet() { return *LinearPLogP(50e-6, 100e-6, 12.5e6, 0); }

// P = 40 (⌊log P⌋ = 5, ⌈log P⌉ = 6), m = 1 MiB, s = 8 KiB (k = 128).
TEST(PLogPTables, BroadcastTable) {
  const double expected[kNumPLogPBroadcasts] = {3.27550712, 3.27580728, 3.77080712, 3.27740712,
                                                3.28911336, 0.12733976, 1.00813296, 0.4202304,
                                                0.42203136, 0.4837304};
  for (int i = 0; i < kNumPLogPBroadcasts; ++i) {
    const auto algorithm = static_cast<PLogPBroadcast>(i);
    EXPECT_NEAR(*PLogPBroadcastSeconds(Ethernet(), algorithm, 40, 1 << 20, 8192), expected[i], 1e-9)
        << PLogPBroadcastName(algorithm);
  }
}

// P = 8, m = 1 KiB.
TEST(PLogPTables, ScatterTable) {
  const PLogPParams params = Ethernet();
  EXPECT_NEAR(*PLogPScatterSeconds(params, PLogPScatter::kFlat, 8, 1024), 1.32344e-3, 1e-12);
  EXPECT_NEAR(*PLogPScatterSeconds(params, PLogPScatter::kChain, 8, 1024), 3.34376e-3, 1e-12);
  EXPECT_NEAR(*PLogPScatterSeconds(params, PLogPScatter::kBinomial, 8, 1024), 1.02344e-3, 1e-12);
  EXPECT_EQ(ChooseScatterMethod(params, 8, 1024)->algorithm, PLogPScatter::kBinomial);
}

TEST(PLogPTables, SegmentOptimiser) {
  EXPECT_EQ(CandidateSegmentBytes(5000), (std::vector<double>{1024, 2048, 4096, 5000}));
  EXPECT_EQ(CandidateSegmentBytes(512), (std::vector<double>{512}));
  // T(s) for the segmented chain falls to 0.12734 s at 8 KiB (4 KiB: 0.12769, 16 KiB: 0.14584).
  Result<BroadcastMethod> best =
      OptimiseSegment(Ethernet(), PLogPBroadcast::kSegmentedChain, 40, 1 << 20);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->segment_bytes, 8192);
  EXPECT_NEAR(best->predicted_s, 0.12733976, 1e-9);
  Result<BroadcastMethod> whole =
      OptimiseSegment(Ethernet(), PLogPBroadcast::kBinomial, 40, 1 << 20);
  EXPECT_EQ(whole->segment_bytes, 1 << 20);
}

// The paper's finding on 100 Mb/s Ethernet with 40 nodes: the segmented chain is the best
// broadcast for large messages; the binomial tree wins for small ones.
TEST(PLogPTables, DecisionMap) {
  Result<std::vector<BroadcastDecision>> map =
      BroadcastDecisionMap(Ethernet(), {40}, {1024, 1 << 20});
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ((*map)[0].method.algorithm, PLogPBroadcast::kBinomial);
  EXPECT_NEAR((*map)[0].method.predicted_s, 1.2096e-3, 1e-12);
  EXPECT_EQ((*map)[1].method.algorithm, PLogPBroadcast::kSegmentedChain);
  EXPECT_EQ((*map)[1].method.segment_bytes, 8192);
  EXPECT_EQ((*map)[1].p, 40);
}

TEST(PLogPTables, BadInput) {
  EXPECT_FALSE(PLogPBroadcastSeconds(Ethernet(), PLogPBroadcast::kFlat, 0, 1, 1).ok());
  EXPECT_FALSE(PLogPBroadcastSeconds(Ethernet(), PLogPBroadcast::kSegmentedChain, 4, 1, 0).ok());
  EXPECT_FALSE(OptimiseSegment(Ethernet(), PLogPBroadcast::kSegmentedChain, 4, 0).ok());
  EXPECT_FALSE(PLogPScatterSeconds(Ethernet(), PLogPScatter::kChain, 4, -1).ok());
}

}  // namespace
}  // namespace gridcast::models
