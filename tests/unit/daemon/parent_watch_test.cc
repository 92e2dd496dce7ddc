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
  static constexpr uint64_t kLaneBytes = 64 << 20;
  const ParentWatchTimes watch_times_{.silent_after = milliseconds(1000), .gone_after = milliseconds(600),
                                      .grace = milliseconds(2000), .slow_after = milliseconds(3000),
                                      .very_slow_after = milliseconds(500)};
  ParentWatch watch_{{1, 2, -1}, {kLaneBytes, kLaneBytes, kLaneBytes}, watch_times_};
  const Clock::time_point start_ = Clock::time_point(std::chrono::hours(1));

  Clock::time_point At(int ms) const { return start_ + milliseconds(ms); }
  std::vector<LaneTrouble> Judge(int ms, std::vector<ParentWatch::LaneNow> lanes = {{}, {}, {}}) {
    return watch_.Judge(At(ms), lanes);
  }
  // From `from_ms` to `to_ms`, every 250 ms: lane 0 brings `lane0` bytes, lane 1 `lane1`; each
  // step judged with `now0` for lane 0. Returns the last step's troubles.
  std::vector<LaneTrouble> Stream(int from_ms, int to_ms, uint64_t lane0, uint64_t lane1,
                                  ParentWatch::LaneNow now0 = {.remaining_bytes = kLaneBytes}) {
    std::vector<LaneTrouble> troubles;
    for (int ms = from_ms; ms <= to_ms; ms += 250) {
      watch_.Received(0, lane0);
      watch_.Progress(0, At(ms));
      watch_.Received(1, lane1);
      watch_.Progress(1, At(ms));
      troubles = Judge(ms, {now0, {.remaining_bytes = kLaneBytes}, {}});
    }
    return troubles;
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

// A parent whose daemon died refuses the dial its child makes once the connection ended: gone
// then, not 600 ms after. A refusal for a parent the lane no longer has,
// or one followed by the parent's own re-dial, says nothing.
TEST_F(ParentWatchTest, AParentThatRefusesADialIsGoneAtOnce) {
  constexpr ParentWatch::LaneNow kMissing{.remaining_bytes = kLaneBytes};
  watch_.Start(At(0));
  EXPECT_FALSE(watch_.ShouldProbe(0, kMissing, At(300)));  // never connected: the grace and gone_after decide
  OpenBoth(10);
  watch_.Progress(0, At(2900));
  watch_.Progress(1, At(2900));
  watch_.Closed(0, At(3000));
  EXPECT_FALSE(watch_.ShouldProbe(0, {.held = true}, At(3000)));  // the parent sent it all
  EXPECT_TRUE(watch_.ShouldProbe(0, kMissing, At(3000)));
  EXPECT_FALSE(watch_.ShouldProbe(1, kMissing, At(3200)));  // connected
  EXPECT_FALSE(watch_.ShouldProbe(2, kMissing, At(3200)));  // its own lane
  watch_.Refused(0, /*parent=*/2);                // another lane's parent: not this one's
  EXPECT_TRUE(Judge(3250).empty());
  watch_.Refused(0, /*parent=*/1);
  EXPECT_FALSE(watch_.ShouldProbe(0, kMissing, At(3250)));
  std::vector<LaneTrouble> troubles = Judge(3250);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].reason, RepairReason::kGone);
  EXPECT_DOUBLE_EQ(troubles[0].since_s, 0.25);

  // A new parent (a patch) that died before anyone knew: asked once, after gone_after, and
  // gone at its refusal though the grace has not passed.
  watch_.Reattached(0, /*parent=*/2, At(5000));
  watch_.Progress(1, At(5500));
  EXPECT_FALSE(watch_.ShouldProbe(0, kMissing, At(5599)));
  EXPECT_TRUE(watch_.ShouldProbe(0, kMissing, At(5600)));
  EXPECT_FALSE(watch_.ShouldProbe(0, kMissing, At(5850)));  // once
  EXPECT_TRUE(Judge(5850).empty());               // the grace
  watch_.Refused(0, /*parent=*/2);
  troubles = Judge(5900);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].parent, 2);
  EXPECT_EQ(troubles[0].reason, RepairReason::kGone);

  ParentWatch later{{1, 2, -1}, {kLaneBytes, kLaneBytes, kLaneBytes}, ParentWatchTimes{}};
  later.Start(At(0));
  later.Opened(0, At(10));
  later.Opened(1, At(10));
  later.Closed(0, At(3000));
  later.Refused(0, 1);
  later.Opened(0, At(3300));  // the parent came back (a restart): its connection counts
  for (int ms = 3300; ms <= 3900; ms += 200) {
    later.Progress(0, At(ms));
    later.Progress(1, At(ms));
    EXPECT_TRUE(later.Judge(At(ms), {{}, {}, {}}).empty()) << ms;
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

TEST_F(ParentWatchTest, ALaneFarBelowTheOtherIsSlow) {
  watch_.Start(At(0));
  OpenBoth(10);
  // Lane 0 at a fifth of lane 1: 50 KB and 250 KB every 250 ms.
  EXPECT_TRUE(Stream(250, 2750, 50'000, 250'000).empty());  // not yet a whole window
  std::vector<LaneTrouble> troubles = Stream(3000, 3250, 50'000, 250'000);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].parent, 1);
  EXPECT_EQ(troubles[0].reason, RepairReason::kSlow);
  EXPECT_NEAR(troubles[0].measured_bps, 1.6e6, 1e3);
  EXPECT_NEAR(troubles[0].expected_bps, 8e6, 1e3);
  EXPECT_NEAR(troubles[0].since_s, 3.0, 0.3);
  EXPECT_EQ(watch_.Trouble(0), RepairReason::kSlow);
  EXPECT_FALSE(watch_.Trouble(1).has_value());
  // It stays slow while it lasts, reported fresh once.
  troubles = Stream(3500, 3500, 50'000, 250'000);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_FALSE(troubles[0].fresh);
  // A new parent starts a new window.
  watch_.Reattached(0, 2, At(3600));
  watch_.Opened(0, At(3700));
  EXPECT_TRUE(Stream(3750, 6500, 50'000, 250'000).empty());
  EXPECT_EQ(Stream(6750, 6750, 50'000, 250'000).size(), 1u);
  // Back at the other lane's pace: the verdict goes once the window holds no slow seconds.
  EXPECT_EQ(Stream(7000, 7000, 250'000, 250'000).size(), 1u);
  EXPECT_TRUE(Stream(7250, 10000, 250'000, 250'000).empty());
}

// Far below, half a second tells: lane 0 at a twelfth (20 KB and 250 KB every 250 ms) is slow
// once half a second of it is measured, not after the whole window; at a fifth it is not.
TEST_F(ParentWatchTest, ALaneAtATwelfthIsSlowWithinHalfASecond) {
  watch_.Start(At(0));
  OpenBoth(10);
  EXPECT_TRUE(Stream(250, 500, 20'000, 250'000).empty());  // no half second measured yet
  const std::vector<LaneTrouble> troubles = Stream(750, 750, 20'000, 250'000);
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].reason, RepairReason::kSlow);
  EXPECT_NEAR(troubles[0].measured_bps, 640e3, 1e3);
  EXPECT_NEAR(troubles[0].since_s, 0.5, 0.01);

  ParentWatch fifth({1, 2, -1}, {kLaneBytes, kLaneBytes, kLaneBytes}, watch_times_);
  fifth.Start(At(0));
  fifth.Opened(0, At(10));
  fifth.Opened(1, At(10));
  for (int ms = 250; ms <= 2750; ms += 250) {
    fifth.Received(0, 50'000);
    fifth.Received(1, 250'000);
    fifth.Progress(0, At(ms));
    fifth.Progress(1, At(ms));
    EXPECT_TRUE(fifth.Judge(At(ms), {{.remaining_bytes = kLaneBytes}, {.remaining_bytes = kLaneBytes}, {}}).empty())
        << ms;
  }
}

// A window in which the usual pace brings fewer than kChunksPerJudgedWindow chunks judges
// nothing: a healthy lane's gap between two chunks would look like a stall. Here the half
// second brings 500 KB at lane 1's pace, under four chunks of 256 KiB: only the three-second
// rule speaks.
TEST_F(ParentWatchTest, AWindowOfFewerThanAFewChunksJudgesNothing) {
  ParentWatch coarse({1, 2, -1}, {kLaneBytes, kLaneBytes, kLaneBytes}, watch_times_, 256 << 10);
  coarse.Start(At(0));
  coarse.Opened(0, At(10));
  coarse.Opened(1, At(10));
  std::vector<LaneTrouble> troubles;
  int found_ms = -1;
  for (int ms = 250; ms <= 4000 && found_ms < 0; ms += 250) {
    coarse.Received(0, 20'000);
    coarse.Received(1, 250'000);
    coarse.Progress(0, At(ms));
    coarse.Progress(1, At(ms));
    troubles = coarse.Judge(At(ms), {{.remaining_bytes = kLaneBytes}, {.remaining_bytes = kLaneBytes}, {}});
    if (!troubles.empty()) found_ms = ms;
  }
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].reason, RepairReason::kSlow);
  EXPECT_GE(found_ms, 3000) << "judged by the half-second window";
}

// Where the transport tells what the kernel received, the pace counts that: a slow lane's
// chunks come a part at a time, in steps, while its bytes flow evenly.
TEST_F(ParentWatchTest, TheKernelsBytesCountOnceTheyAreTold) {
  watch_.Start(At(0));
  OpenBoth(10);
  for (int ms = 250; ms <= 5000; ms += 250) {
    // Lane 0's chunks: one of 1 MB every 4 s; its bytes: as lane 1's.
    if (ms % 4000 == 0) watch_.Received(0, 1'000'000);
    watch_.Received(1, 250'000);
    watch_.Arrived(0, 250'000);
    watch_.Arrived(1, 250'000);
    watch_.Progress(0, At(ms));
    watch_.Progress(1, At(ms));
    EXPECT_TRUE(Judge(ms, {{.remaining_bytes = kLaneBytes}, {.remaining_bytes = kLaneBytes}, {}}).empty()) << ms;
  }
  // The kernel's bytes of lane 0 slow to a twelfth: slow within a second.
  std::vector<LaneTrouble> troubles;
  for (int ms = 5250; ms <= 6500; ms += 250) {
    watch_.Arrived(0, 20'000);
    watch_.Arrived(1, 250'000);
    watch_.Progress(0, At(ms));
    watch_.Progress(1, At(ms));
    troubles = Judge(ms, {{.remaining_bytes = kLaneBytes}, {.remaining_bytes = kLaneBytes}, {}});
  }
  ASSERT_EQ(troubles.size(), 1u);
  EXPECT_EQ(troubles[0].lane, 0);
  EXPECT_EQ(troubles[0].reason, RepairReason::kSlow);
}

TEST_F(ParentWatchTest, TheChildsOwnDownloadOrTheLanesEndAreNeverSlow) {
  watch_.Start(At(0));
  OpenBoth(10);
  // Both lanes slow alike: this member's own download.
  EXPECT_TRUE(Stream(250, 5000, 20'000, 20'000).empty());
  // A lane with less left than a window at the other's pace is ending, not slow.
  EXPECT_TRUE(Stream(5250, 10000, 20'000, 250'000, {.remaining_bytes = 900'000}).empty());
  // Nor while this member holds the parent up.
  EXPECT_TRUE(Stream(10250, 15000, 20'000, 250'000, {.owes = true, .remaining_bytes = kLaneBytes}).empty());
  EXPECT_EQ(Stream(15250, 18500, 20'000, 250'000).size(), 1u);  // and otherwise it is
}

TEST(ParentWatchAlone, ALaneWithNothingToCompareWithIsNeverSlow) {
  const auto at = [](int ms) { return Clock::time_point(std::chrono::hours(1)) + milliseconds(ms); };
  ParentWatch watch({1, -1}, {1 << 20, 1 << 20}, ParentWatchTimes{});
  watch.Start(at(0));
  watch.Opened(0, at(10));
  for (int ms = 250; ms <= 10000; ms += 250) {
    watch.Received(0, 100);
    watch.Progress(0, at(ms));
    EXPECT_TRUE(watch.Judge(at(ms), {{.remaining_bytes = 1 << 20}, {}}).empty()) << ms;
  }
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
