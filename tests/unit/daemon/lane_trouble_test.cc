// What a member reports when a lane stops arriving (ParentWatch inside a real execution, over
// the loopback transport): the child of a stopped parent says gone, the child of a parent that
// hardly sends (256 bytes a second) says silent, and the members below them, whose parents
// wait and send keepalives, say nothing.
#include <gtest/gtest.h>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

class LaneTroubleTest : public PlanExecutionFixture {
 protected:
  void SetUp() override {
    loopback_ = true;
    upload_bytes_per_s_[0] = 1 << 20;  // the chain's pace: a 64 KiB chunk per 62 ms
    base_options_.parent_silent = std::chrono::milliseconds(500);
    base_options_.repair_stall = std::chrono::milliseconds(500);  // a grace of 1 s
    PlanExecutionFixture::SetUp();
  }

  // Starts a chain 0 -> 1 -> 2 -> 3 of 200 chunks and waits until member 3 holds 10.
  void StartChain() {
    MakePayloadAndPlan(200 * kChunk, "chain");
    ASSERT_EQ(plan_.lanes.size(), 1u);
    for (int i = 0; i < kMembers; ++i) {
      ASSERT_EQ(plan_.lanes[0].ParentOf(i), i - 1);
      StartMember(i, OpenStore(i));
    }
    ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(3).chunks_done >= 10; }));
    for (int i = 1; i < kMembers; ++i) EXPECT_TRUE(SnapshotOf(i).lane_trouble.empty()) << i;
  }

  // Waits until member 2 reports trouble in its lane; checks that it names member 1, that it
  // has lasted at least `at_least` seconds (the watch's time), and that member 3 reports nothing
  // meanwhile.
  LaneTrouble TroubleAtMember2(std::chrono::steady_clock::time_point since, double at_least) {
    std::vector<std::pair<LaneTrouble, std::string>> troubles;
    EXPECT_TRUE(WaitUntil([&] {
      EXPECT_TRUE(SnapshotOf(3).lane_trouble.empty());
      troubles = SnapshotOf(2).lane_trouble;
      return !troubles.empty();
    }));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    if (troubles.size() != 1u) {
      ADD_FAILURE() << troubles.size() << " troubles";
      return {};
    }
    const auto& [trouble, parent_name] = troubles[0];
    EXPECT_EQ(trouble.lane, 0);
    EXPECT_EQ(trouble.parent, 1);
    EXPECT_EQ(parent_name, plan_.members[1]);
    EXPECT_GE(trouble.since_s, at_least);
    EXPECT_GE(waited, at_least);
    EXPECT_LT(waited, 5.0);
    // Its child waits for chunks and keeps telling member 3 so.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_TRUE(SnapshotOf(3).lane_trouble.empty());
    EXPECT_FALSE(SnapshotOf(2).lane_trouble.empty());
    return trouble;
  }
};

TEST_F(LaneTroubleTest, TheChildOfAStoppedParentReportsItGone) {
  StartChain();
  const auto stopped = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    executions_.at(1)->RequestStop("the test stops it");
  }
  // Gone after three re-dial intervals of 20 ms, but not sooner than 100 ms.
  EXPECT_EQ(TroubleAtMember2(stopped, 0.1).reason, RepairReason::kGone);
  EXPECT_LT(SnapshotOf(2).chunks_done, 200u);
}

class HardlySendingParentTest : public LaneTroubleTest {
 protected:
  void SetUp() override {
    upload_bytes_per_s_[1] = 256;  // a chunk's batch of digests in half a minute, a chunk in four
    LaneTroubleTest::SetUp();
  }
};

TEST_F(HardlySendingParentTest, ItsChildReportsItSilent) {
  const auto started = std::chrono::steady_clock::now();
  MakePayloadAndPlan(200 * kChunk, "chain");
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  EXPECT_EQ(TroubleAtMember2(started, 0.5).reason, RepairReason::kSilent);
  EXPECT_GE(SnapshotOf(1).chunks_done, 20u);  // member 1 itself receives at the chain's pace
}

}  // namespace
}  // namespace gridcast
