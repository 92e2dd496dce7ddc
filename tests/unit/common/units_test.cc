#include "common/units.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gridcast {
namespace {

TEST(ParseRateBps, AcceptsEveryUnit) {
  EXPECT_DOUBLE_EQ(*ParseRateBps("400mbit"), 4e8);
  EXPECT_DOUBLE_EQ(*ParseRateBps("1gbit"), 1e9);
  EXPECT_DOUBLE_EQ(*ParseRateBps("2.5gbit"), 2.5e9);
  EXPECT_DOUBLE_EQ(*ParseRateBps("64kbit"), 64e3);
  EXPECT_DOUBLE_EQ(*ParseRateBps("1200bit"), 1200);
  EXPECT_DOUBLE_EQ(*ParseRateBps(" 100 Mbit "), 1e8);
}

TEST(ParseRateBps, RejectsBadInput) {
  for (const char* bad : {"100mbps", "100", "mbit", "", "-5mbit", "0mbit", "1e3mbit", "1.2.3mbit"}) {
    Result<double> rate = ParseRateBps(bad);
    EXPECT_FALSE(rate.ok()) << bad;
    if (!rate.ok()) {
      EXPECT_EQ(rate.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_NE(ParseRateBps("100mbps").status().message().find("bad rate unit"), std::string::npos);
}

TEST(ParseSizeBytes, AcceptsEveryUnit) {
  EXPECT_EQ(*ParseSizeBytes("0"), 0u);
  EXPECT_EQ(*ParseSizeBytes("17"), 17u);
  EXPECT_EQ(*ParseSizeBytes("17B"), 17u);
  EXPECT_EQ(*ParseSizeBytes("4KiB"), 4096u);
  EXPECT_EQ(*ParseSizeBytes("256MiB"), 256u << 20);
  EXPECT_EQ(*ParseSizeBytes("1.5GiB"), 3u << 29);
  EXPECT_EQ(*ParseSizeBytes("5GiB"), 5ull << 30);
  EXPECT_EQ(*ParseSizeBytes("2TiB"), 2ull << 40);
}

TEST(ParseSizeBytes, RejectsBadInput) {
  for (const char* bad : {"1MB", "1.5B", "x", "", "1.3KiB", "99999999TiB"}) {
    EXPECT_FALSE(ParseSizeBytes(bad).ok()) << bad;
  }
}

TEST(ParseDurationSeconds, AcceptsUnits) {
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("10ms"), 0.01);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("2s"), 2);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("0"), 0);
  EXPECT_FALSE(ParseDurationSeconds("10").ok());
  EXPECT_FALSE(ParseDurationSeconds("10min").ok());
}

TEST(ParseAgeSeconds, AcceptsDaysToSeconds) {
  EXPECT_DOUBLE_EQ(*ParseAgeSeconds("7d"), 7 * 86400);
  EXPECT_DOUBLE_EQ(*ParseAgeSeconds("12h"), 12 * 3600);
  EXPECT_DOUBLE_EQ(*ParseAgeSeconds("90min"), 5400);
  EXPECT_DOUBLE_EQ(*ParseAgeSeconds("3600s"), 3600);
  EXPECT_DOUBLE_EQ(*ParseAgeSeconds("1.5d"), 1.5 * 86400);
  EXPECT_FALSE(ParseAgeSeconds("10").ok());
  EXPECT_FALSE(ParseAgeSeconds("10ms").ok());
  EXPECT_NE(ParseAgeSeconds("2w").status().message().find("use d, h, min or s"), std::string::npos);
}

TEST(FormatRate, RoundTrips) {
  for (double bps : {4e8, 1e9, 2.5e9, 64e3, 123456789.0, 50e6, 1.0}) {
    std::string text = FormatRate(bps);
    Result<double> back = ParseRateBps(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_DOUBLE_EQ(*back, bps) << text;
  }
  EXPECT_EQ(FormatRate(4e8), "400mbit");
  EXPECT_EQ(FormatRate(2.5e9), "2.5gbit");
  EXPECT_EQ(FormatRate(INFINITY), "unshaped");
}

TEST(FormatSize, PicksTheLargestExactUnit) {
  EXPECT_EQ(FormatSize(0), "0B");
  EXPECT_EQ(FormatSize(1023), "1023B");
  EXPECT_EQ(FormatSize(256u << 20), "256MiB");
  EXPECT_EQ(FormatSize((1u << 20) + 1), "1.00MiB");
  EXPECT_EQ(FormatSize(5ull << 30), "5GiB");
}

}  // namespace
TEST(CeilDiv, CountsThePartialLastChunkAndNeverOverflows) {
  EXPECT_EQ(CeilDiv(0, 4), 0u);
  EXPECT_EQ(CeilDiv(1, 4), 1u);
  EXPECT_EQ(CeilDiv(4, 4), 1u);
  EXPECT_EQ(CeilDiv(5, 4), 2u);
  EXPECT_EQ(CeilDiv(7, 0), 0u);
  // (a + b - 1) / b would wrap here and say 0.
  EXPECT_EQ(CeilDiv(UINT64_MAX, uint64_t{1} << 20), uint64_t{1} << 44);
  static_assert(CeilDiv(10, 3) == 4);
}

}  // namespace gridcast
