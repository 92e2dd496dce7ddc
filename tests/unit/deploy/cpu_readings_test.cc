#include "deploy/cpu_readings.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

using std::chrono::milliseconds;

const CpuReadings::Clock::time_point kT0 = CpuReadings::Clock::time_point(std::chrono::seconds(1'700'000'000));

TEST(CpuReadingsTest, InterpolatesBetweenReadingsAndClampsOutside) {
  CpuReadings readings;
  readings.Add(kT0, 1.0);
  readings.Add(kT0 + milliseconds(20), 1.2);
  readings.Add(kT0 + milliseconds(40), 1.2);
  EXPECT_DOUBLE_EQ(readings.At(kT0 - milliseconds(5)), 1.0);
  EXPECT_DOUBLE_EQ(readings.At(kT0), 1.0);
  EXPECT_NEAR(readings.At(kT0 + milliseconds(5)), 1.05, 1e-9);
  EXPECT_DOUBLE_EQ(readings.At(kT0 + milliseconds(20)), 1.2);
  EXPECT_DOUBLE_EQ(readings.At(kT0 + milliseconds(30)), 1.2);
  EXPECT_DOUBLE_EQ(readings.At(kT0 + milliseconds(99)), 1.2);
}

TEST(CpuReadingsTest, IgnoresAReadingOlderThanTheLast) {
  CpuReadings readings;
  readings.Add(kT0 + milliseconds(20), 2.0);
  readings.Add(kT0, 5.0);
  EXPECT_EQ(readings.size(), 1u);
  EXPECT_DOUBLE_EQ(readings.last(), 2.0);
}

TEST(CpuReadingsTest, StaysBoundedKeepingTheFirstAndLatestAndStaysAccurate) {
  CpuReadings readings;
  // A process using a steady half core for 10 * kMaxReadings readings of 20 ms.
  const size_t n = 10 * CpuReadings::kMaxReadings;
  for (size_t i = 0; i < n; ++i) readings.Add(kT0 + milliseconds(20 * i), 0.010 * static_cast<double>(i));
  EXPECT_LT(readings.size(), CpuReadings::kMaxReadings);
  EXPECT_DOUBLE_EQ(readings.first(), 0.0);
  EXPECT_DOUBLE_EQ(readings.last(), 0.010 * static_cast<double>(n - 1));
  for (size_t i : {size_t{1}, n / 3, n / 2, n - 2}) {
    EXPECT_NEAR(readings.At(kT0 + milliseconds(20 * i)), 0.010 * static_cast<double>(i), 1e-6) << i;
  }
}

}  // namespace
}  // namespace gridcast
