// Hockney, LogP, LogGP and pLogP curves ([SUR] 3.2), against hand-computed values.
#include <gtest/gtest.h>

#include "collectives/models/hockney.h"
#include "collectives/models/loggp.h"
#include "collectives/models/plogp.h"

namespace gridcast::models {
namespace {

TEST(Hockney, PointToPointAndBinomial) {
  const HockneyParams params{10e-6, 1e-8};  // 10 µs, 100 MB/s
  EXPECT_DOUBLE_EQ(*HockneyPointToPointSeconds(params, 1e6), 0.01001);
  EXPECT_DOUBLE_EQ(*HockneyBinomialBroadcastSeconds(params, 5, 1e6), 0.03003);  // ⌈log 5⌉ = 3
  EXPECT_DOUBLE_EQ(*HockneyBinomialBroadcastSeconds(params, 8, 1e6), 0.03003);
  EXPECT_DOUBLE_EQ(*HockneyBinomialBroadcastSeconds(params, 1, 1e6), 0);
  EXPECT_FALSE(HockneyBinomialBroadcastSeconds(params, 0, 1).ok());
  EXPECT_FALSE(HockneyPointToPointSeconds({-1, 0}, 1).ok());
}

TEST(Hockney, LinkMatrix) {
  HockneyLinkMatrix matrix{2, {{0, 0}, {1e-3, 1e-9}, {2e-3, 2e-9}, {0, 0}}};
  EXPECT_DOUBLE_EQ(*HockneyLinkSeconds(matrix, 0, 1, 1e6), 0.002);
  EXPECT_DOUBLE_EQ(*HockneyLinkSeconds(matrix, 1, 0, 1e6), 0.004);
  EXPECT_FALSE(HockneyLinkSeconds(matrix, 0, 0, 1).ok());
  EXPECT_FALSE(HockneyLinkSeconds(matrix, 0, 2, 1).ok());
  matrix.links.pop_back();
  EXPECT_FALSE(HockneyLinkSeconds(matrix, 0, 1, 1).ok());
}

// [SUR] Fig. 1.5: g + 2o + L when g > o, else 3o + L.
TEST(LogP, TwoPeerBroadcastHasBothCases) {
  EXPECT_DOUBLE_EQ(*LogPTwoPeerBroadcastSeconds({5, 2, 3}), 12);  // g > o: 3 + 4 + 5
  EXPECT_DOUBLE_EQ(*LogPTwoPeerBroadcastSeconds({5, 2, 1}), 11);  // g <= o: 6 + 5
  EXPECT_DOUBLE_EQ(*LogPTwoPeerBroadcastSeconds({5, 2, 2}), 11);  // g == o is the 3o + L case
}

TEST(LogP, BinomialAndLogGP) {
  EXPECT_DOUBLE_EQ(*LogPBinomialBroadcastSeconds({5, 2, 3}, 16), 36);    // 4·(4 + 5)
  Result<double> outside = LogPBinomialBroadcastSeconds({5, 2, 9}, 16);  // g >= 2o + L
  EXPECT_EQ(outside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_DOUBLE_EQ(*LogGPBinomialBroadcastSeconds({{5, 2, 3}, 0.5}, 16, 9), 52);  // 4·(9 + 4)
  EXPECT_FALSE(LogGPBinomialBroadcastSeconds({{5, 2, 3}, 0.5}, 16, 0).ok());
}

TEST(PLogP, PiecewiseLinearInterpolatesAndExtends) {
  Result<PiecewiseLinear> g = PiecewiseLinear::Create({{0, 10}, {100, 20}, {200, 60}});
  ASSERT_TRUE(g.ok());
  EXPECT_DOUBLE_EQ((*g)(50), 15);
  EXPECT_DOUBLE_EQ((*g)(100), 20);
  EXPECT_DOUBLE_EQ((*g)(150), 40);   // the rendezvous-like kink
  EXPECT_DOUBLE_EQ((*g)(300), 100);  // last slope extended
  EXPECT_DOUBLE_EQ((*PiecewiseLinear::Create({{64, 3}}))(1e9), 3);
  Result<PiecewiseLinear> falling = PiecewiseLinear::Create({{10, 5}, {20, 1}});
  EXPECT_DOUBLE_EQ((*falling)(100), 0);  // clamped, never negative
  EXPECT_FALSE(PiecewiseLinear::Create({}).ok());
  EXPECT_FALSE(PiecewiseLinear::Create({{10, 1}, {10, 2}}).ok());
  EXPECT_FALSE(PiecewiseLinear::Create({{0, -1}}).ok());
}

TEST(PLogP, LinearModel) {
  Result<PLogPParams> params = LinearPLogP(50e-6, 100e-6, 12.5e6, 20e-6);
  ASSERT_TRUE(params.ok());
  EXPECT_DOUBLE_EQ(params->gap(1e7), 100e-6 + 0.8);
  EXPECT_DOUBLE_EQ(params->send_overhead(1e7), 20e-6);
  EXPECT_FALSE(LinearPLogP(0, 0, 0, 0).ok());
}

}  // namespace
}  // namespace gridcast::models
