// SendPacing's rule with times and byte counts given by hand: caps grow only while the capped
// connections together send at their caps.
#include "daemon/executor/send_pacing.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gridcast {
namespace {

using Clock = SendPacing::Clock;
using std::chrono::milliseconds;

class SendPacingTest : public ::testing::Test {
 protected:
  const Clock::time_point start_ = Clock::time_point(std::chrono::hours(1));
  SendPacing pacing_;

  // Ticks every 250 ms from `from_ms` to `to_ms`, the connections sending `bytes_per_s`
  // together under caps of `caps_bytes_per_s`. Returns how many times the caps grew.
  int Send(int from_ms, int to_ms, double bytes_per_s, double caps_bytes_per_s, bool balancing = false) {
    int grew = 0;
    for (int ms = from_ms; ms <= to_ms; ms += 250) {
      const auto acked = static_cast<uint64_t>(ms == from_ms ? 0 : bytes_per_s / 4);
      if (pacing_.Observe(start_ + milliseconds(ms), acked, caps_bytes_per_s, balancing)) ++grew;
    }
    return grew;
  }
};

TEST_F(SendPacingTest, StartsAtTheSlackOverThePlannedRate) {
  EXPECT_DOUBLE_EQ(pacing_.factor(), SendPacing::kSlack);
}

TEST_F(SendPacingTest, ALinkAtItsPlannedRateKeepsTheCaps) {
  // Two lanes of 25 mbit planned, capped at 26 each; the link delivers 0.955 of 50 mbit.
  const double caps = 2 * 26e6 / 8;
  EXPECT_EQ(Send(0, 10000, 0.955 * 50e6 / 8, caps), 0);
  EXPECT_DOUBLE_EQ(pacing_.factor(), SendPacing::kSlack);
}

TEST_F(SendPacingTest, ASlowChildHoldsNothingBack) {
  // One lane's child takes 5 mbit, the other lane runs at its cap: together well below.
  EXPECT_EQ(Send(0, 10000, (5e6 + 26e6) / 8, 2 * 26e6 / 8), 0);
}

TEST_F(SendPacingTest, CapsTakenWhileALaneYieldsGrowNothing) {
  // 25 mbit planned per lane: the lane ahead takes all of its yielding cap, the one behind all
  // of its own (its child has download to spare): taken, but balancing.
  const double caps = (SendPacing::kYield + SendPacing::kSlack) * 25e6 / 8;
  EXPECT_EQ(Send(0, 10000, caps, caps, /*balancing=*/true), 0);
  // Balanced again: no window counts until one has passed, then the next whole one grows them.
  EXPECT_EQ(Send(10250, 11500, caps, caps), 0);
  EXPECT_EQ(Send(11750, 12750, caps, caps), 1);
}

TEST_F(SendPacingTest, ConnectionsAtTheirCapsGrowThemOncePerWindow) {
  double caps = 2 * 26e6 / 8;
  int grew = 0;
  // A network ten times faster than described: each window the connections fill their caps.
  for (int second = 0; second < 5; ++second) {
    const double before = pacing_.factor();
    grew += Send(second * 1000, second * 1000 + 1000, 0.99 * caps, caps);
    caps *= pacing_.factor() / before;
  }
  EXPECT_GE(grew, 4);
  EXPECT_NEAR(pacing_.factor(), SendPacing::kSlack * std::pow(SendPacing::kGrowth, grew), 1e-9);
}

TEST_F(SendPacingTest, NoCapsNeverGrow) { EXPECT_EQ(Send(0, 5000, 1e9, 0), 0); }

TEST_F(SendPacingTest, AConnectionThatEndsCountsAgainstItsCapWhileItWasOpen) {
  // Two lanes at 0.92 of their caps; half way through the window one child dies, and the
  // caps of the connections open fall to half: the bytes before count against both caps.
  const double cap = 26e6 / 8;
  pacing_.Observe(start_, 0, 2 * cap);
  EXPECT_FALSE(pacing_.Observe(start_ + milliseconds(500), static_cast<uint64_t>(0.92 * cap), 2 * cap));
  EXPECT_FALSE(pacing_.Observe(start_ + milliseconds(1000), static_cast<uint64_t>(0.46 * cap), cap));
  EXPECT_DOUBLE_EQ(pacing_.factor(), SendPacing::kSlack);
}

TEST_F(SendPacingTest, AConnectionThatEndsWithinATickCountsAgainstItsCap) {
  // Both connections send at 0.92 of their caps until one ends just before a tick.
  const double cap = 26e6 / 8;
  pacing_.Observe(start_, 0, 2 * cap);
  for (int ms = 250; ms <= 1000; ms += 250) {
    EXPECT_FALSE(pacing_.Observe(start_ + milliseconds(ms), static_cast<uint64_t>(0.92 * 2 * cap / 4),
                                 ms == 1000 ? cap : 2 * cap));
  }
  EXPECT_DOUBLE_EQ(pacing_.factor(), SendPacing::kSlack);
}

// Yielding: a lane ahead of the furthest-behind lane that keeps up yields; a lane that does not
// keep up (a slow child) holds nobody back, nor does a closed connection.
TEST(SendPacingYield, ALaneAheadOfOneThatKeepsUpYields) {
  // Lane 1 half a second ahead of lane 0, which keeps up (a patch moved it): lane 1 yields.
  EXPECT_EQ(SendPacing::Yielding({{.open = true, .position_s = 10.0, .keeps_up = true},
                                  {.open = true, .position_s = 10.5, .keeps_up = true}}),
            (std::vector<bool>{false, true}));
  // Within kLead of each other, as a healthy plan's lanes run: nobody yields.
  EXPECT_EQ(SendPacing::Yielding({{.open = true, .position_s = 10.0, .keeps_up = true},
                                  {.open = true, .position_s = 10.2, .keeps_up = true}}),
            (std::vector<bool>{false, false}));
  // The lane behind is slow (its child takes a tenth of its cap): it holds nobody back.
  EXPECT_EQ(SendPacing::Yielding({{.open = true, .position_s = 1.0, .keeps_up = false},
                                  {.open = true, .position_s = 10.5, .keeps_up = true}}),
            (std::vector<bool>{false, false}));
  // Three lanes: the two ahead of the one behind yield, a closed connection neither counts nor
  // yields, and a lane ahead yields though it does not keep up itself.
  EXPECT_EQ(SendPacing::Yielding({{.open = true, .position_s = 4.0, .keeps_up = true},
                                  {.open = false, .position_s = 1.0, .keeps_up = true},
                                  {.open = true, .position_s = 5.0, .keeps_up = false},
                                  {.open = true, .position_s = 4.3, .keeps_up = true}}),
            (std::vector<bool>{false, false, true, true}));
  EXPECT_TRUE(SendPacing::Yielding({}).empty());
}

}  // namespace
}  // namespace gridcast
