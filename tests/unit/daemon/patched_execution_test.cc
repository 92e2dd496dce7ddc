// Plan patches applied by real executions (over the loopback transport): a dead parent's child
// fed by its new parent to the end, a child moving away from a live parent, and a patch that
// comes before Start. The moves are given by hand; choosing them is collectives/plan_patch.h's.
#include <gtest/gtest.h>

#include <future>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

class PatchedExecutionTest : public PlanExecutionFixture {
 protected:
  static constexpr uint64_t kChunks = 200;

  void SetUp() override {
    loopback_ = true;
    upload_bytes_per_s_[0] = 2 << 20;  // the chain's pace: a 64 KiB chunk per 31 ms
    PlanExecutionFixture::SetUp();
  }

  // A chain 0 -> 1 -> 2 -> 3 of kChunks chunks.
  void MakeChain() {
    MakePayloadAndPlan(kChunks * kChunk, "chain");
    ASSERT_EQ(plan_.lanes.size(), 1u);
    for (int i = 0; i < kMembers; ++i) ASSERT_EQ(plan_.lanes[0].ParentOf(i), i - 1);
  }

  static PlanPatch MoveIn(int version, int child, int old_parent, int new_parent) {
    PlanPatch patch;
    patch.version = version;
    patch.moves.push_back({.lane = 0, .child = child, .old_parent = old_parent, .new_parent = new_parent, .streams = 1});
    return patch;
  }

  // Applies `patch` at member i, on the io thread, and waits until it did.
  void Patch(int i, const PlanPatch& patch) {
    std::shared_ptr<PlanExecution> execution;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      execution = executions_.at(i);
    }
    std::promise<void> applied;
    boost::asio::post(io_, [&] {
      EXPECT_TRUE(execution->ApplyPatches({patch}, {}).ok());
      applied.set_value();
    });
    applied.get_future().wait();
  }

  uint64_t PushedFromTo(int from, int to) {
    return CountersOf(from)->Peer(plan_.members[to], Transport::kPush).sent_bytes.load();
  }
};

TEST_F(PatchedExecutionTest, ADeadParentsChildIsFedByItsNewParentToTheEnd) {
  MakeChain();
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(3).chunks_done >= 10; }));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    executions_.at(1)->RequestStop("the test stops it");
  }
  const PlanPatch patch = MoveIn(1, 2, 1, 0);
  for (int i : {0, 2, 3}) Patch(i, patch);
  ASSERT_TRUE(WaitUntil([&] { return DoneAndVerified(2) && DoneAndVerified(3); }));
  EXPECT_EQ(ReadFile(MemberDir(3) / "payload.bin"), ReadFile(source_path_));
  EXPECT_EQ(SnapshotOf(2).patch_version, 1);
  EXPECT_EQ(SnapshotOf(1).state, ExecutionState::kStopped);
  EXPECT_GT(PushedFromTo(0, 2), 0u);
  Patch(2, patch);  // again: nothing happens
  EXPECT_EQ(SnapshotOf(2).patch_version, 1);
}

TEST_F(PatchedExecutionTest, AChildMovesAwayFromALiveParent) {
  MakeChain();
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(3).chunks_done >= 10; }));
  const PlanPatch patch = MoveIn(1, 3, 2, 1);
  for (int i = 0; i < kMembers; ++i) Patch(i, patch);
  const uint64_t from_old_parent = PushedFromTo(2, 3);
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
  EXPECT_GT(PushedFromTo(1, 3), 0u);
  // What member 2 sent member 3 after the patch: at most the chunks it had on their way then.
  EXPECT_LE(PushedFromTo(2, 3), from_old_parent + 8 * kChunk);
}

TEST_F(PatchedExecutionTest, APatchBeforeStartShapesTheTreeFromTheFirstChunk) {
  MakeChain();
  const PlanPatch patch = MoveIn(1, 2, 1, 0);
  for (int i = 0; i < kMembers; ++i) {
    StartMember(i, OpenStore(i), [&patch](PlanExecution& execution) {
      EXPECT_TRUE(execution.ApplyPatches({patch}, {}).ok());
    });
  }
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
  EXPECT_EQ(PushedFromTo(1, 2), 0u);
  EXPECT_GT(PushedFromTo(0, 2), 0u);
}

TEST_F(PatchedExecutionTest, APatchThatMovesThisMemberFromAParentItDoesNotHaveIsRefused) {
  MakeChain();
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  std::shared_ptr<PlanExecution> member;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    member = executions_.at(3);
  }
  std::promise<Status> applied;
  boost::asio::post(io_, [&] { applied.set_value(member->ApplyPatches({MoveIn(1, 3, 1, 0)}, {})); });
  const Status status = applied.get_future().get();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("its parent there is member 2"), std::string::npos) << status.message();
  EXPECT_EQ(SnapshotOf(3).patch_version, 0);
  ASSERT_TRUE(WaitAllDone());
}

}  // namespace
}  // namespace gridcast
