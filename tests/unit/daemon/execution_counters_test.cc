// What the executor counts into DaemonCounters (gridcastd --metrics): bytes per peer equal to
// what the plan moves on each edge, every chunk verified once, a chunk whose bytes do not match
// its hash counted as refused and resent (and never as verified), and each plan's end once.
#include <gtest/gtest.h>

#include <fstream>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

class ExecutionCountersTest : public PlanExecutionFixture {
 protected:
  uint64_t Received(int member, int from) {
    return PeerRow(member, plan_.members[from]).received_bytes;
  }
  uint64_t Sent(int member, int to) { return PeerRow(member, plan_.members[to]).sent_bytes; }

 private:
  DaemonCounters::PeerRow PeerRow(int member, const std::string& peer) {
    for (const DaemonCounters::PeerRow& row : CountersOf(member)->Read().peers) {
      if (row.peer == peer && row.transport == Transport::kPush) return row;
    }
    return {peer, Transport::kPush, 0, 0};
  }
};

const size_t kPush = PlanModeIndex(PlanMode::kPush);
constexpr int kFinished = static_cast<int>(PlanOutcome::kFinished);

TEST_F(ExecutionCountersTest, AChainCountsEachEdgeOnceAndEveryChunkVerifiedOnce) {
  constexpr uint64_t kBytes = 40 * kChunk + 123;
  MakePayloadAndPlan(kBytes, "chain");
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitAllDone());
  // The source finishes too, once its children hold everything.
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(0).state == ExecutionState::kDone; }));
  for (int i = 1; i < kMembers; ++i) {
    const int parent = plan_.lanes[0].ParentOf(i);
    ASSERT_GE(parent, 0);
    EXPECT_EQ(Received(i, parent), kBytes) << "member " << i;
    EXPECT_EQ(Sent(parent, i), kBytes) << "member " << parent;
    const DaemonCounters::Snapshot counted = CountersOf(i)->Read();
    EXPECT_EQ(counted.chunks_verified[static_cast<int>(Transport::kPush)], 41u) << "member " << i;
    EXPECT_EQ(counted.chunks_refused[static_cast<int>(Transport::kPush)], 0u);
    EXPECT_EQ(counted.plans_ended[kPush][kFinished], 1u);
    EXPECT_EQ(SnapshotOf(i).pushed_received_bytes, kBytes);
  }
  const DaemonCounters::Snapshot source = CountersOf(0)->Read();
  EXPECT_EQ(source.chunks_verified[static_cast<int>(Transport::kPush)], 0u);
  EXPECT_EQ(source.chunks_resent, 0u);
  EXPECT_EQ(source.plans_ended[kPush][kFinished], 1u);
  EXPECT_EQ(SnapshotOf(0).pushed_sent_bytes, kBytes);
  EXPECT_EQ(SnapshotOf(0).pushed_received_bytes, 0u);
}

// Over each transport and digest.
class ExecutionResendTest : public ExecutionVariantFixture {};
GRIDCAST_EXECUTION_VARIANTS(ExecutionResendTest);

// The source's file changes under a chunk after it was hashed: every child refuses the bytes
// (counted, not written) and the source resends them until the file is right again.
TEST_P(ExecutionResendTest, ABadChunkIsCountedRefusedAndResentNeverVerified) {
  MakePayloadAndPlan(30 * kChunk, "flat");
  const std::string original = ReadFile(source_path_);
  const auto poke = [&](char byte) {
    std::fstream file(source_path_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(5 * kChunk + 17);
    file.put(byte);
  };
  poke(static_cast<char>(original[5 * kChunk + 17] ^ 0x5a));
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  const auto refused = [&] {
    uint64_t total = 0;
    for (int i = 1; i < kMembers; ++i) total += CountersOf(i)->Read().chunks_refused[static_cast<int>(Transport::kPush)];
    return total;
  };
  ASSERT_TRUE(WaitUntil([&] { return refused() >= 1; }));
  poke(original[5 * kChunk + 17]);
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
  EXPECT_GE(CountersOf(0)->Read().chunks_resent, 1u);
  for (int i = 1; i < kMembers; ++i) {
    // Each chunk verified once: the refused bytes were never taken as chunk 5.
    EXPECT_EQ(CountersOf(i)->Read().chunks_verified[static_cast<int>(Transport::kPush)], 30u) << "member " << i;
  }
}

TEST_F(ExecutionCountersTest, AStoppedPlanIsCountedAsStopped) {
  MakePayloadAndPlan(10 * kChunk, "chain");
  StartMember(1, OpenStore(1));  // its parent never comes
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(1).state == ExecutionState::kRunning; }));
  StopAll();
  const DaemonCounters::Snapshot counted = CountersOf(1)->Read();
  EXPECT_EQ(counted.plans_ended[kPush][static_cast<int>(PlanOutcome::kStopped)], 1u);
  EXPECT_EQ(counted.plans_ended[kPush][kFinished], 0u);
}

TEST(DaemonCountersTest, PeersBeyondTheCapShareOneEntry) {
  DaemonCounters counters;
  for (size_t i = 0; i < DaemonCounters::kMaxPeers + 10; ++i) {
    counters.Peer("p" + std::to_string(i), Transport::kPush).sent_bytes += 1;
  }
  const DaemonCounters::Snapshot s = counters.Read();
  EXPECT_EQ(s.peers.size(), DaemonCounters::kMaxPeers + 1);
  uint64_t other = 0, total = 0;
  for (const auto& row : s.peers) {
    total += row.sent_bytes;
    if (row.peer == DaemonCounters::kOtherPeers) other = row.sent_bytes;
  }
  EXPECT_EQ(total, DaemonCounters::kMaxPeers + 10);
  EXPECT_EQ(other, 10u);
  counters.ControlCall("Prepare", 0);
  counters.ControlCall("Prepare", 0);
  counters.ControlCall("Prepare", 3);
  const auto calls = counters.Read().control_calls;
  EXPECT_EQ(calls.at({"Prepare", 0}), 2u);
  EXPECT_EQ(calls.at({"Prepare", 3}), 1u);
}

}  // namespace
}  // namespace gridcast
