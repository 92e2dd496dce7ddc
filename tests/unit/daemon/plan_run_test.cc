// PlanRun, the handle the coordinator, Status and the metrics follow a plan's run through: what
// it shows of a push at its source and its members, and the traffic sums with a swarm's report.
#include "daemon/participant/plan_run.h"

#include <gtest/gtest.h>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

TEST(PlanTrafficTest, ASwarmsBytesAddToTheLanesOnlyWhenItsReportWasTaken) {
  ExecutionSnapshot lanes;
  lanes.pushed_sent_bytes = 100;
  lanes.pushed_received_bytes = 40;
  SwarmReport swarm;
  swarm.uploaded_bytes = 7;
  swarm.received.resize(2);
  swarm.received[0].bytes = 5;
  swarm.received[1].bytes = 3;
  const PlanTraffic with = TrafficOf(lanes, swarm);
  EXPECT_EQ(with.sent_bytes, 107u);
  EXPECT_EQ(with.received_bytes, 48u);
  const PlanTraffic without = TrafficOf(lanes, std::nullopt);
  EXPECT_EQ(without.sent_bytes, 100u);
  EXPECT_EQ(without.received_bytes, 40u);
}

class PlanRunTest : public PlanExecutionFixture {
 protected:
  PlanRun RunOf(int i) {
    std::lock_guard<std::mutex> lock(mutex_);
    return PlanRun(executions_.at(i));
  }
};

TEST_F(PlanRunTest, APushShowsItsSourceAndItsMembers) {
  constexpr uint64_t kBytes = 9 * kChunk + 5;
  MakePayloadAndPlan(kBytes, "chain");
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitAllDone());
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(0).state == ExecutionState::kDone; }));
  const PlanRun source = RunOf(0);
  EXPECT_EQ(source.id(), id_);
  EXPECT_EQ(source.mode(), PlanMode::kPush);
  EXPECT_TRUE(source.IsSource());
  EXPECT_FALSE(source.Swarm());
  ASSERT_TRUE(source.Closing());
  EXPECT_EQ(source.Closing()->payload_sha256, identity_.sha256);
  EXPECT_EQ(source.Closing()->chunk_list_digest, identity_.ListDigest());
  EXPECT_EQ(source.PayloadSha256(), identity_.sha256);
  EXPECT_EQ(TrafficOf(source.Snapshot(), source.Swarm()).sent_bytes, kBytes);  // a chain: one copy leaves
  for (int i = 1; i < kMembers; ++i) {
    const PlanRun member = RunOf(i);
    EXPECT_FALSE(member.IsSource());
    const ExecutionSnapshot snapshot = member.Snapshot();
    EXPECT_EQ(snapshot.state, ExecutionState::kDone) << "member " << i;
    EXPECT_EQ(snapshot.chunks_done, 10u);
    EXPECT_EQ(TrafficOf(snapshot, member.Swarm()).received_bytes, kBytes);
    EXPECT_EQ(member.ReusedBytes(), 0u);
  }
}

}  // namespace
}  // namespace gridcast
