// ParentWatch's rules with the times given by hand: gone, silent, neither (keepalives, a child
// that holds its parent up, a lane held whole, the grace), and how LaneRepair reads it.
#include "daemon/executor/parent_watch.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

using Clock = ParentWatch::Clock;
using std::chrono::milliseconds;

class ParentWatchTest : public ::testing::Test {
 protected:
  // Lane 0 from member 1, lane 1 from member 2; lane 2 is this member's own (it is its source).
  ParentWatch watch_{{1, 2, -1}, ParentWatchTimes{.silent_after = milliseconds(1000), .gone_after = milliseconds(600),
                                                  .grace = milliseconds(2000)}};
  const Clock::time_point start_ = Clock::time_point(std::chrono::hours(1));

  Clock::time_point At(int ms) const { return start_ + milliseconds(ms); }
  std::vector<LaneTrouble> Judge(int ms, std::vector<ParentWatch::LaneNow> lanes = {{}, {}, {}}) {
    return watch_.Judge(At(ms), lanes);
  }
  // Both lanes connected at `ms`.
  void OpenBoth(int ms) {
    watch_.Opened(0, At(ms));
    watch_.Opened(1, At(ms));
  }
};

TEST_F(ParentWatchTest, NothingIsJudgedBeforeStartOrDuringTheGrace) {
  EXPECT_TRUE(Judge(5000).empty());  // not started: nothing runs yet
  watch_.Start(At(0));
  EXPECT_TRUE(Judge(1999).empty());  // no connection for 2 s, but the grace lasts 2 s
  EXPECT_EQ(watch_.QuietFor(0, At(1999)), Clock::duration::zero());
  const std::vector<LaneTrouble> troubles = Judge(2000);
  ASSERT_EQ(troubles.size(), 2u);  // never connected: gone, since Start
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].parent, 1);
  EXPECT_EQ(troubles[0].reason, RepairReason::kGone);
  EXPECT_DOUBLE_EQ(troubles[0].since_s, 2.0);
  EXPECT_TRUE(troubles[0].fresh);
  EXPECT_EQ(troubles[1].parent, 2);
}

TEST_F(ParentWatchTest, AConnectionEndedAndNotReopenedWithinTheTimeIsGone) {
  watch_.Start(At(0));
  OpenBoth(10);
  watch_.Progress(0, At(2900));
  watch_.Progress(1, At(2900));
  watch_.Closed(0, At(3000));
  watch_.Progress(1, At(3500));
  EXPECT_TRUE(Judge(3599).empty());
  std::vector<LaneTrouble> troubles = Judge(3600);  // gone after 600 ms, sooner than silent
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].reason, RepairReason::kGone);
  EXPECT_DOUBLE_EQ(troubles[0].since_s, 0.6);
  EXPECT_EQ(watch_.Trouble(0), RepairReason::kGone);
  EXPECT_FALSE(watch_.Trouble(1).has_value());
  watch_.Progress(1, At(4400));
  troubles = Judge(4500);  // still gone, no longer new
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_FALSE(troubles[0].fresh);
  EXPECT_DOUBLE_EQ(troubles[0].since_s, 1.5);
}

TEST_F(ParentWatchTest, AParentThatRedialsWithinTheTimeIsNotGone) {
  watch_.Start(At(0));
  OpenBoth(10);
  watch_.Progress(0, At(2900));
  watch_.Progress(1, At(2900));
  watch_.Closed(0, At(3000));
  EXPECT_TRUE(Judge(3100).empty());
  watch_.Opened(0, At(3200));  // re-dialled 200 ms later
  for (int ms = 3500; ms <= 6000; ms += 500) {
    watch_.Progress(0, At(ms));
    watch_.Progress(1, At(ms));
    EXPECT_TRUE(Judge(ms).empty()) << ms;
  }
}

TEST_F(ParentWatchTest, ALaneWithManyStreamsIsGoneOnlyWhenEveryConnectionEnded) {
  watch_.Start(At(0));
  OpenBoth(10);
  watch_.Opened(0, At(10));  // a second stream
  watch_.Closed(0, At(2500));
  for (int ms = 2600; ms <= 5000; ms += 200) {
    watch_.Progress(0, At(ms));
    watch_.Progress(1, At(ms));
  }
  EXPECT_TRUE(Judge(5000).empty());
  watch_.Closed(0, At(5000));
  watch_.Progress(1, At(6000));
  const std::vector<LaneTrouble> troubles = Judge(6000);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].reason, RepairReason::kGone);
}

TEST_F(ParentWatchTest, AnOpenConnectionWithoutBytesOrKeepalivesIsSilent) {
  watch_.Start(At(0));
  OpenBoth(10);
  watch_.Progress(0, At(2500));
  watch_.Progress(1, At(3400));
  EXPECT_TRUE(Judge(3499).empty());
  std::vector<LaneTrouble> troubles = Judge(3500);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].reason, RepairReason::kSilent);
  EXPECT_DOUBLE_EQ(troubles[0].since_s, 1.0);
  EXPECT_EQ(watch_.QuietFor(0, At(3500)), milliseconds(1000));
  // A keepalive ends it (a parent waiting for chunks itself is not the failure).
  watch_.Progress(0, At(3600));
  watch_.Progress(1, At(3600));
  EXPECT_TRUE(Judge(3700).empty());
  EXPECT_FALSE(watch_.Trouble(0).has_value());
  // Silent again later: reported anew.
  watch_.Progress(1, At(4500));
  troubles = Judge(4600);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_TRUE(troubles[0].fresh);
}

TEST_F(ParentWatchTest, AChildThatHoldsItsParentUpDoesNotCallItSilent) {
  watch_.Start(At(0));
  OpenBoth(10);
  for (int ms = 2000; ms <= 6000; ms += 250) {
    watch_.Progress(1, At(ms));
    // Lane 0's chunks wait for this member's verification, or its replies are not written.
    EXPECT_TRUE(Judge(ms, {{.held = false, .owes = true}, {}, {}}).empty()) << ms;
  }
  // Once it owes nothing, the parent has the time again before it counts as silent.
  watch_.Progress(1, At(6500));
  EXPECT_TRUE(Judge(6999).empty());
  EXPECT_EQ(Judge(7000).size(), 1u);
}

TEST_F(ParentWatchTest, ALaneHeldWholeHasNoTrouble) {
  watch_.Start(At(0));
  OpenBoth(10);
  watch_.Closed(0, At(2500));  // its parent closes once it sent everything
  watch_.Progress(1, At(4000));
  EXPECT_TRUE(Judge(4000, {{.held = true, .owes = false}, {}, {}}).empty());
  EXPECT_FALSE(watch_.Trouble(0).has_value());
}

TEST_F(ParentWatchTest, AParentLostDuringTheGraceIsGoneWithoutWaitingForItsEnd) {
  watch_.Start(At(0));
  OpenBoth(100);
  watch_.Closed(0, At(300));  // it had connected: the grace no longer covers the lane
  watch_.Progress(1, At(850));
  const std::vector<LaneTrouble> troubles = Judge(900);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].reason, RepairReason::kGone);
  EXPECT_DOUBLE_EQ(troubles[0].since_s, 0.6);
  EXPECT_EQ(watch_.QuietFor(0, At(900)), milliseconds(800));  // since its connection opened
  // A new parent has the grace again until it connects.
  watch_.Reattached(0, 2, At(1000));
  watch_.Progress(1, At(2900));
  EXPECT_TRUE(Judge(2999).empty());
  watch_.Opened(0, At(3100));
  watch_.Progress(1, At(3150));
  EXPECT_TRUE(Judge(3200).empty());
  EXPECT_EQ(Judge(4100).size(), 1u);  // then silent, from its connection on
  EXPECT_EQ(watch_.Trouble(0), RepairReason::kSilent);
}

TEST_F(ParentWatchTest, QuietTimeCountsFromTheGraceOrTheLastProgress) {
  watch_.Start(At(0));
  EXPECT_EQ(watch_.QuietFor(0, At(2500)), milliseconds(500));
  watch_.Opened(0, At(2600));
  EXPECT_EQ(watch_.QuietFor(0, At(3000)), milliseconds(400));
  EXPECT_EQ(watch_.QuietFor(2, At(3000)), Clock::duration::zero());  // it is the lane's source
  EXPECT_TRUE(Judge(9000, {{.held = true, .owes = false}, {.held = true, .owes = false}, {}}).empty());
}

}  // namespace
}  // namespace gridcast
