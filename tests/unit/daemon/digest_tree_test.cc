// The digest tree (daemon/executor/digest_tree.h): a pull plan's members get every signed batch
// of digests from their parent in the tree, the source signing them, over every transport and
// digest; a member that comes late gets them all the same; only its parent in the tree is
// accepted on the tree's lane. Executors in one process (plan_execution_fixture.h), with no
// swarm attached: only batches move.
#include <gtest/gtest.h>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

TEST(DigestTreePlaceTest, TheControlTreesShapeRootedAtTheSource) {
  DigestTreePlace root = DigestTreePlaceOf(0, 0, 4, 2);
  EXPECT_EQ(root.parent, -1);
  EXPECT_EQ(root.children, (std::vector<int>{1, 2}));
  EXPECT_EQ(DigestTreePlaceOf(1, 0, 4, 2).children, (std::vector<int>{3}));
  EXPECT_EQ(DigestTreePlaceOf(3, 0, 4, 2).parent, 1);
  // Source 2: positions 0..3 are members 2, 3, 0, 1.
  EXPECT_EQ(DigestTreePlaceOf(2, 2, 4, 2).parent, -1);
  EXPECT_EQ(DigestTreePlaceOf(2, 2, 4, 2).children, (std::vector<int>{3, 0}));
  EXPECT_EQ(DigestTreePlaceOf(3, 2, 4, 2).children, (std::vector<int>{1}));
  EXPECT_EQ(DigestTreePlaceOf(1, 2, 4, 2).parent, 3);
  EXPECT_TRUE(DigestTreePlaceOf(0, 2, 4, 2).children.empty());
  // Every member but the root has one parent, which lists it.
  for (int members : {1, 2, 9, 30}) {
    for (int fanout : {1, 3, 8}) {
      for (int source = 0; source < members; source += 7) {
        for (int m = 0; m < members; ++m) {
          const DigestTreePlace place = DigestTreePlaceOf(m, source, members, fanout);
          EXPECT_EQ(place.parent < 0, m == source);
          if (place.parent < 0) continue;
          const std::vector<int> siblings = DigestTreePlaceOf(place.parent, source, members, fanout).children;
          EXPECT_EQ(std::count(siblings.begin(), siblings.end(), m), 1);
        }
      }
    }
  }
}

using DigestTreeTest = ExecutionVariantFixture;
GRIDCAST_EXECUTION_VARIANTS(DigestTreeTest);

// 0 -> {1, 2}, 1 -> {3}: member 3's batches pass through member 1.
TEST_P(DigestTreeTest, EveryMemberOfAPullPlanGetsEveryBatch) {
  MakePayloadAndPlan(24 << 20, "swarm");
  ASSERT_TRUE(plan_.HasSwarm());
  ASSERT_FALSE(plan_.HasLanes());
  const uint64_t batches = DigestBatches(identity_.chunk_bytes, identity_.NumChunks()).count();
  ASSERT_GE(batches, 4u);
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] {
    for (int i = 1; i < kMembers; ++i) {
      if (SnapshotOf(i).digest_batches_held != batches) return false;
    }
    return true;
  }));
  for (int i = 1; i < kMembers; ++i) {
    const ExecutionSnapshot member = SnapshotOf(i);
    EXPECT_EQ(member.state, ExecutionState::kRunning) << "member " << i;
    EXPECT_EQ(member.chunks_done, 0u) << "only batches travel the tree";
  }
}

TEST_P(DigestTreeTest, AMemberThatComesLateGetsEveryBatch) {
  MakePayloadAndPlan(24 << 20, "swarm");
  const uint64_t batches = DigestBatches(identity_.chunk_bytes, identity_.NumChunks()).count();
  for (int i = 0; i < kMembers - 1; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(1).digest_batches_held == batches; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // member 1 dials 3 in vain meanwhile
  StartMember(kMembers - 1, OpenStore(kMembers - 1));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(kMembers - 1).digest_batches_held == batches; }));
}

TEST_F(PlanExecutionFixture, OnlyTheParentInTheDigestTreeIsAcceptedOnItsLane) {
  MakePayloadAndPlan(4 << 20, "swarm");
  StartMember(3, OpenStore(3));  // its parent in the tree is member 1
  std::shared_ptr<PlanExecution> member;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    member = executions_[3];
  }
  Hello hello;
  hello.plan_id = id_;
  hello.lane = kDigestTreeLane;
  hello.parent = 1;
  EXPECT_TRUE(member->CheckParent(hello).ok());
  hello.parent = 0;
  EXPECT_EQ(member->CheckParent(hello).code(), StatusCode::kPermissionDenied);
  hello.parent = 1;
  hello.stream_count = 2;
  EXPECT_EQ(member->CheckParent(hello).code(), StatusCode::kInvalidArgument);
  // The root has no parent there.
  StartMember(0, OpenStore(0));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    member = executions_[0];
  }
  hello.stream_count = 1;
  EXPECT_EQ(member->CheckParent(hello).code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace gridcast
