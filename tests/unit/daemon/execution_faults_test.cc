// The executor over a store that fails (FaultInjectionFileIo): a member whose disk fails
// mid-broadcast fails with the cause named and never reports a copy; the others, not below it,
// finish; restarted on a working disk it resumes from what it had verified.
#include <gtest/gtest.h>

#include <cerrno>

#include "fault_injection_file_io.h"
#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

class ExecutionFaultTest : public PlanExecutionFixture {
 protected:
  // A member, not a local: the faulty store calls it until TearDown stops the executions.
  FaultInjectionFileIo io_;
};

constexpr int kFaulty = 2;

TEST_F(ExecutionFaultTest, AMemberWhoseDiskFailsIsNamedAndTheOthersFinish) {
  MakePayloadAndPlan(30 * kChunk + 5, "flat");  // every member a child of the source
  io_.FailWrites(".part", EIO, /*after=*/10);
  for (int i = 0; i < kMembers; ++i) StartMember(i, i == kFaulty ? OpenStore(i, io_) : OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(kFaulty).state == ExecutionState::kFailed; }));
  const std::string error = SnapshotOf(kFaulty).error;
  EXPECT_NE(error.find("Input/output error"), std::string::npos) << error;
  EXPECT_NE(error.find(plan_.members[kFaulty]), std::string::npos) << error;
  ASSERT_TRUE(WaitUntil([&] { return DoneAndVerified(1) && DoneAndVerified(3); }));
  EXPECT_FALSE(fs::exists(MemberDir(kFaulty) / "payload.bin"));  // no copy presented as complete
  EXPECT_EQ(ReadFile(MemberDir(1) / "payload.bin"), ReadFile(source_path_));
}

// The bitmap's disk fails after some chunks (the member stops there, as a crash between a
// chunk's write and its bit would); the member comes back on a working disk with the chunks
// whose bits were written, receives the rest and ends equal to the source.
TEST_F(ExecutionFaultTest, AMemberStoppedByAFailingBitmapResumesFromItsVerifiedChunks) {
  MakePayloadAndPlan(40 * kChunk, "chain");
  io_.FailWrites(".state", EIO, /*after=*/11);  // the header at open (the bitmap is a hole), then ten bits
  for (int i = 0; i < kMembers; ++i) StartMember(i, i == kFaulty ? OpenStore(i, io_) : OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(kFaulty).state == ExecutionState::kFailed; }));
  const uint64_t verified_before = SnapshotOf(kFaulty).chunks_done;
  EXPECT_GE(verified_before, 10u);
  std::shared_ptr<PayloadStore> resumed = OpenStore(kFaulty);
  ASSERT_NE(resumed, nullptr);
  EXPECT_EQ(resumed->VerifiedCount(), 10u);  // exactly the chunks whose bits reached the disk
  StartMember(kFaulty, resumed);
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

}  // namespace
}  // namespace gridcast
