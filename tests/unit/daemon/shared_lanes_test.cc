// Plans whose lanes share chunks (Plan::shared_chunks): the source hands each chunk to the lane
// that drains first, members pass chunks on in the order they reached them, and a member holds
// its acknowledgements while its children in a lane fall behind. Executors in one process,
// over sockets and the loopback transport (plan_execution_fixture.h).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "collectives/validate_plan.h"
#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

// Two lanes from member 0: lane 0 down 0 -> 1 -> {2, 3}, lane 1 down 0 -> 2 -> {1, 3}; each
// listing every other chunk as its expected share.
Plan TwoCrossedLanes(const Plan& base, bool shared) {
  Plan plan = base;
  const uint64_t chunks = plan.NumChunks();
  plan.lanes.clear();
  plan.lanes.push_back(Lane{0, {ChunkRange{0, chunks, 2}}, {Fanout{0, {1}, {}}, Fanout{1, {2, 3}, {}}}, 1});
  plan.lanes.push_back(Lane{0, {ChunkRange{1, chunks, 2}}, {Fanout{0, {2}, {}}, Fanout{2, {1, 3}, {}}}, 1});
  plan.shared_chunks = shared;
  return plan;
}

using SharedLanesTest = ExecutionVariantFixture;
GRIDCAST_EXECUTION_VARIANTS(SharedLanesTest);

// Every member ends with every chunk, each received once (no chunk travels two lanes), with one
// stream per edge and with two.
TEST_P(SharedLanesTest, EveryMemberReceivesEveryChunkOnce) {
  for (const std::string planner : {"splitstream:2", "multilane", "binary"}) {
    for (int streams : {1, 2}) {
      SCOPED_TRACE(planner + " with " + std::to_string(streams) + " stream(s)");
      const uint64_t bytes = 45 * kChunk + 17;
      MakePayloadAndPlan(bytes, planner);
      plan_.shared_chunks = true;
      for (Lane& lane : plan_.lanes) lane.streams = streams;
      ASSERT_TRUE(ValidatePlan(plan_).ok());
      for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
      ASSERT_TRUE(WaitAllDone());
      ExpectEveryCopy();
      for (int i = 1; i < kMembers; ++i) EXPECT_EQ(SnapshotOf(i).pushed_received_bytes, bytes) << "member " << i;
      StopAll();
      for (int i = 1; i < kMembers; ++i) {
        fs::remove_all(MemberDir(i));
        fs::create_directories(MemberDir(i));
      }
      id_ = PlanId::Random();
    }
  }
}

// Member 1 uploads slowly and forwards lane 0. With a fixed partition it forwards half the
// payload to two children whatever its speed; with shared chunks lane 0 takes fewer of them
// (member 1 holds its acknowledgements, the source's window to it fills) and member 2's fast
// lane carries the rest.
class SlowLaneTest : public PlanExecutionFixture {
 protected:
  void SetUp() override {
    loopback_ = true;
    upload_bytes_per_s_[1] = 16 << 20;
    PlanExecutionFixture::SetUp();
  }

  // Bytes members 1 and 2 forwarded in a broadcast of 128 chunks over TwoCrossedLanes, members
  // 2 and 3 starting `late`.
  std::pair<uint64_t, uint64_t> Forwarded(bool shared, std::chrono::milliseconds late = {}) {
    MakePayloadAndPlan(128 * kChunk, "binary");
    plan_ = TwoCrossedLanes(plan_, shared);
    EXPECT_TRUE(ValidatePlan(plan_).ok());
    for (int i = 0; i < kMembers; ++i) {
      if (i == 2) std::this_thread::sleep_for(late);
      StartMember(i, OpenStore(i));
    }
    EXPECT_TRUE(WaitAllDone());
    ExpectEveryCopy();
    EXPECT_TRUE(WaitUntil([&] { return SnapshotOf(1).forwarding_done && SnapshotOf(2).forwarding_done; }));
    const std::pair<uint64_t, uint64_t> forwarded = {SnapshotOf(1).pushed_sent_bytes, SnapshotOf(2).pushed_sent_bytes};
    StopAll();
    for (int i = 1; i < kMembers; ++i) {
      fs::remove_all(MemberDir(i));
      fs::create_directories(MemberDir(i));
    }
    id_ = PlanId::Random();
    return forwarded;
  }
};

TEST_F(SlowLaneTest, ASlowLaneCarriesFewerChunks) {
  const auto [fixed_slow, fixed_fast] = Forwarded(false);
  EXPECT_EQ(fixed_slow, fixed_fast);
  const auto [shared_slow, shared_fast] = Forwarded(true);
  EXPECT_EQ(shared_slow + shared_fast, fixed_slow + fixed_fast);  // each chunk to two children
  // The fast member is bound by the CPU it gets: it forwarded 2.9 times the slow one's bytes
  // with three sanitized test programs sharing the two cores, more on a quiet host.
  EXPECT_LT(shared_slow * 2, shared_fast) << shared_slow << " bytes forwarded by the slow member, "
                                          << shared_fast << " by the fast one";
}

// Members 2 and 3 start late, so member 1 cannot pass lane 0 on for a while: it holds its
// acknowledgements meanwhile, and lane 0 does not take the payload before its edges open.
TEST_F(SlowLaneTest, ALaneTakesNoChunksItCannotPassOnYet) {
  const auto [slow, fast] = Forwarded(true, std::chrono::milliseconds(300));
  // Exactly 3x (4 and 12 MiB) once on a loaded host: half, as above.
  EXPECT_LT(slow * 2, fast) << slow << " bytes forwarded by the slow member, " << fast << " by the fast one";
}

// The slow member goes down holding chunks of lane 0 it had not forwarded yet. Back, it is told
// which lane its chunks are in (ASSIGN frames: its parent does not send what it holds) and
// passes them on; every copy ends whole.
TEST_F(SlowLaneTest, AMemberBackWithChunksItHadNotForwardedPassesThemOn) {
  MakePayloadAndPlan(128 * kChunk, "binary");
  plan_ = TwoCrossedLanes(plan_, true);
  for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(1).chunks_done >= 12; }));
  std::shared_ptr<PlanExecution> gone;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gone = executions_[1];
    executions_.erase(1);
  }
  gone->RequestStop("the member went down");
  ASSERT_TRUE(WaitUntil([&] { return gone.use_count() == 1; }));
  gone.reset();
  std::shared_ptr<PayloadStore> back = OpenStore(1);
  ASSERT_NE(back, nullptr);
  StartMember(1, back);
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

TEST(SharedLanesPlanTest, OnlyPushPlansOfOneSourceShareChunks) {
  Plan plan;
  plan.members = {"a", "b", "c", "d"};
  plan.payload_bytes = 10 << 20;
  plan = TwoCrossedLanes(plan, true);
  EXPECT_TRUE(ValidatePlan(plan).ok());
  Plan two_sources = plan;
  two_sources.lanes[1] = Lane{1, {ChunkRange{1, plan.NumChunks(), 2}}, {Fanout{1, {0, 2, 3}, {}}}, 1};
  two_sources.shared_chunks = false;
  ASSERT_TRUE(ValidatePlan(two_sources).ok()) << ValidatePlan(two_sources).message();
  two_sources.shared_chunks = true;
  EXPECT_FALSE(ValidatePlan(two_sources).ok());
  Plan hybrid = plan;
  hybrid.mode = PlanMode::kHybrid;
  hybrid.swarm.source = 0;
  for (int m = 1; m < 4; ++m) hybrid.swarm.members.push_back(SwarmMember{m, {}, {0}, 0, 0, {}});
  hybrid.shared_chunks = false;
  ASSERT_TRUE(ValidatePlan(hybrid).ok()) << ValidatePlan(hybrid).message();
  hybrid.shared_chunks = true;
  EXPECT_FALSE(ValidatePlan(hybrid).ok());
}

}  // namespace
}  // namespace gridcast
