// The digest tree (daemon/executor/digest_tree.h): a pull plan's members get every signed batch
// of digests from their parent in the tree, the source signing them, over every transport and
// digest; a member that comes late gets them all the same, and so do the children of one that
// never comes; only an ancestor in the tree is accepted on the tree's lane. Executors in one
// process (plan_execution_fixture.h), with no swarm attached: only batches move.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

TEST(DigestTreeShapeTest, TheControlTreesShapeRootedAtTheSource) {
  const DigestTree from_0{0, 4, 2};
  EXPECT_EQ(from_0.ParentOf(0), -1);
  EXPECT_EQ(from_0.ChildrenOf(0), (std::vector<int>{1, 2}));
  EXPECT_EQ(from_0.ChildrenOf(1), (std::vector<int>{3}));
  EXPECT_EQ(from_0.ParentOf(3), 1);
  EXPECT_TRUE(from_0.IsAncestor(0, 3));
  EXPECT_TRUE(from_0.IsAncestor(1, 3));
  EXPECT_FALSE(from_0.IsAncestor(2, 3));
  EXPECT_FALSE(from_0.IsAncestor(3, 3));
  EXPECT_FALSE(from_0.IsAncestor(3, 0));
  // Source 2: positions 0..3 are members 2, 3, 0, 1.
  const DigestTree from_2{2, 4, 2};
  EXPECT_EQ(from_2.ParentOf(2), -1);
  EXPECT_EQ(from_2.ChildrenOf(2), (std::vector<int>{3, 0}));
  EXPECT_EQ(from_2.ChildrenOf(3), (std::vector<int>{1}));
  EXPECT_EQ(from_2.ParentOf(1), 3);
  EXPECT_TRUE(from_2.ChildrenOf(0).empty());
  // Every member but the root has one parent, which lists it, and the root above it.
  for (int members : {1, 2, 9, 30}) {
    for (int fanout : {1, 3, 8}) {
      for (int source = 0; source < members; source += 7) {
        const DigestTree tree{source, members, fanout};
        for (int m = 0; m < members; ++m) {
          const int parent = tree.ParentOf(m);
          EXPECT_EQ(parent < 0, m == source);
          if (parent < 0) continue;
          const std::vector<int> siblings = tree.ChildrenOf(parent);
          EXPECT_EQ(std::count(siblings.begin(), siblings.end(), m), 1);
          EXPECT_TRUE(tree.IsAncestor(source, m));
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

// The tree routes around a member that is not there: its parent feeds its children.
TEST_P(DigestTreeTest, AMissingMembersChildrenAreFedByItsParent) {
  for (int fanout : {1, 2}) {  // 0 -> 1 -> 2 -> 3, and 0 -> {1, 2}, 1 -> {3}
    SCOPED_TRACE("fanout " + std::to_string(fanout));
    digest_tree_fanout_ = fanout;
    MakePayloadAndPlan(24 << 20, "swarm");
    const uint64_t batches = DigestBatches(identity_.chunk_bytes, identity_.NumChunks()).count();
    for (int i : {0, 2, 3}) StartMember(i, OpenStore(i));  // member 1 never comes
    ASSERT_TRUE(WaitUntil([&] {
      return SnapshotOf(2).digest_batches_held == batches && SnapshotOf(3).digest_batches_held == batches;
    }));
    StopAll();
    id_ = PlanId::Random();
  }
}

TEST_F(PlanExecutionFixture, OnlyAnAncestorInTheDigestTreeIsAcceptedOnItsLane) {
  MakePayloadAndPlan(4 << 20, "swarm");
  StartMember(3, OpenStore(3));  // its parent in the tree is member 1, whose parent is 0
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
  EXPECT_TRUE(member->CheckParent(hello).ok());
  hello.parent = 2;
  EXPECT_EQ(member->CheckParent(hello).code(), StatusCode::kPermissionDenied);
  hello.parent = 99;
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
