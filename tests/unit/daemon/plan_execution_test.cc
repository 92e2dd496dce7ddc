// The executor and the data plane in one process: every member's PlanExecution and DataPlane
// on one io_context, each member with its own store in a temporary directory, no daemons and
// no control plane; over sockets and over the loopback transport, with either chunk digest.
// What a broadcast does between Start and done, how a member resumes from what it verified,
// and what happens when a child goes away.
#include "daemon/executor/plan_execution.h"

#include <gtest/gtest.h>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

using PlanExecutionTest = ExecutionVariantFixture;
GRIDCAST_EXECUTION_VARIANTS(PlanExecutionTest);

TEST_P(PlanExecutionTest, EveryPlannerDeliversEveryChunkToEveryMember) {
  for (const std::string planner : {"binary", "chain", "multilane", "splitstream:2", "flat"}) {
    SCOPED_TRACE(planner);
    MakePayloadAndPlan(37 * kChunk + 11, planner);
    for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
    ASSERT_TRUE(WaitAllDone());
    ExpectEveryCopy();
    StopAll();
    for (int i = 1; i < kMembers; ++i) {
      fs::remove_all(MemberDir(i));
      fs::create_directories(MemberDir(i));
    }
    id_ = PlanId::Random();
  }
}

// A source that hashes its payload as it sends it: every planner's members verify every chunk
// against the batches it sealed, and the last batch brings them the payload's SHA-256.
TEST_P(PlanExecutionTest, AStreamedSourceSealsItsBatchesAsItSends) {
  if (!stream_digests_) GTEST_SKIP() << "a streamed source needs signed batches";
  for (const std::string planner : {"chain", "multilane", "splitstream:2"}) {
    SCOPED_TRACE(planner);
    // Enough chunks for several batches: 1 MiB, 2 MiB, 4 MiB, ...
    MakePayloadAndPlan(300 * kChunk + 11, planner);
    StreamTheSource(planner == "chain" ? WeakChecksums::kCompute : WeakChecksums::kSkip);
    EXPECT_EQ(source_->VerifiedCount(), 0u) << "nothing is read before the start";
    for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
    ASSERT_TRUE(WaitAllDone());
    ExpectEveryCopy();
    ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(0).state == ExecutionState::kDone; }));
    EXPECT_EQ(SnapshotOf(0).digest, identity_.ListDigest());
    const std::optional<DigestClosing> closing = source_->digest_log()->Closing();
    ASSERT_TRUE(closing);
    EXPECT_EQ(closing->payload_sha256, identity_.sha256);
    EXPECT_EQ(closing->chunk_list_digest, identity_.ListDigest());
    StopAll();
    for (int i = 1; i < kMembers; ++i) {
      fs::remove_all(MemberDir(i));
      fs::create_directories(MemberDir(i));
    }
    member_identity_.reset();
    id_ = PlanId::Random();
  }
}

// A source file cut short while it is sent: the source fails naming it, and no member holds a
// chunk past the cut.
TEST_P(PlanExecutionTest, AStreamedSourceCutShortFailsTheSource) {
  if (!stream_digests_) GTEST_SKIP() << "a streamed source needs signed batches";
  MakePayloadAndPlan(200 * kChunk, "chain");
  StreamTheSource();
  fs::resize_file(source_path_, 50 * kChunk);
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(0).state == ExecutionState::kFailed; }));
  EXPECT_NE(SnapshotOf(0).error.find("payload.bin"), std::string::npos) << SnapshotOf(0).error;
  for (int i = 1; i < kMembers; ++i) {
    EXPECT_NE(SnapshotOf(i).state, ExecutionState::kDone);
    EXPECT_LE(SnapshotOf(i).chunks_done, 50u);
  }
}

// A member that verified some chunks before it went down resumes from them; a chunk whose
// bytes changed on disk meanwhile is found when the store reopens and is received again, so
// the copy ends equal to the source's.
TEST_P(PlanExecutionTest, AMemberResumesFromWhatItVerifiedAndReReceivesWhatChanged) {
  MakePayloadAndPlan(40 * kChunk, "binary");
  const int resumed = 3;
  const std::string data = ReadFile(source_path_);
  {
    std::shared_ptr<PayloadStore> before = OpenStore(resumed);
    ASSERT_NE(before, nullptr);
    for (uint64_t c = 0; c < 40; c += 2) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(data.data()) + c * kChunk;
      ASSERT_TRUE(before->WriteChunk(c, {bytes, kChunk}).ok());
    }
  }  // the member goes down with 20 chunks verified
  // Chunk 4's bytes change on disk while it is down.
  const fs::path part = MemberDir(resumed) / "payload.bin.part";
  ASSERT_TRUE(fs::exists(part));
  {
    std::fstream file(part, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4 * kChunk + 100);
    file.put('\x5a');
  }
  std::shared_ptr<PayloadStore> after = OpenStore(resumed);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->VerifiedCount(), 19u);  // 20 verified, one no longer hashes right
  EXPECT_FALSE(after->Has(4));
  EXPECT_TRUE(after->Has(6));
  for (int i = 0; i < kMembers; ++i) StartMember(i, i == resumed ? after : OpenStore(i));
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

// A member whose data plane knows no receiver yet (its daemon is still preparing) refuses its
// parents; they retry, and the broadcast completes once it has one.
TEST_P(PlanExecutionTest, ParentsRetryAChildThatIsNotReadyYet) {
  MakePayloadAndPlan(9 * kChunk + 1, "chain");
  for (int i = 0; i < kMembers; ++i) {
    if (i != 2) StartMember(i, OpenStore(i));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  StartMember(2, OpenStore(2));
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

// A child that goes away mid-broadcast (its daemon stops) is connected to again once it is
// back; it re-receives only what it had not verified, and every copy ends whole.
TEST_P(PlanExecutionTest, AChildThatGoesAwayIsServedAgainWhenItReturns) {
  MakePayloadAndPlan(60 * kChunk + 3, "chain");  // 0 -> 1 -> 2 -> 3
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(2).chunks_done >= 5; }));
  std::shared_ptr<PlanExecution> gone;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gone = executions_[2];
    executions_.erase(2);  // its data plane refuses its parent from now on
  }
  gone->RequestStop("the member went down");
  const uint64_t held = gone->store().VerifiedCount();
  ASSERT_TRUE(WaitUntil([&] { return gone.use_count() == 1; }));
  gone.reset();  // the store closes
  std::shared_ptr<PayloadStore> back = OpenStore(2);
  ASSERT_NE(back, nullptr);
  EXPECT_GE(back->VerifiedCount(), held);
  StartMember(2, back);
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

}  // namespace
}  // namespace gridcast
