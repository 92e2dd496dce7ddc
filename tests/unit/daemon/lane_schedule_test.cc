// LaneSchedule: what each lane carries at a member, in which order, to whom; no sockets.
#include "daemon/executor/lane_schedule.h"

#include <gtest/gtest.h>

#include <set>

namespace gridcast {
namespace {

// Four members, eight chunks. Fixed lanes: lane 0 carries the even chunks down 0 -> 1 -> {2, 3}
// with two streams on 1 -> 2; lane 1 the odd ones down 0 -> 2 -> {1, 3}.
Plan TwoLanes() {
  Plan plan;
  plan.members = {"s", "a", "b", "c"};
  plan.chunk_bytes = 100;
  plan.payload_bytes = 750;
  Lane even;
  even.chunks = {{0, 8, 2}};
  even.fanouts = {{0, {1}, {}}, {1, {2, 3}, {2, 1}}};
  Lane odd;
  odd.chunks = {{1, 8, 2}};
  odd.fanouts = {{0, {2}, {}}, {2, {1, 3}, {}}};
  plan.lanes = {even, odd};
  return plan;
}

// The same trees sharing every chunk: the source claims chunks for a lane as it drains them.
Plan SharedLanes() {
  Plan plan = TwoLanes();
  plan.shared_chunks = true;
  for (Lane& lane : plan.lanes) lane.chunks = {{0, 8, 1}};
  return plan;
}

std::vector<uint64_t> LogOf(const LaneSchedule& schedule, int lane) {
  std::vector<uint64_t> log;
  for (uint64_t p = 0; p < schedule.LogSize(lane); ++p) log.push_back(schedule.LoggedAt(lane, p));
  return log;
}

Hello HelloFrom(uint32_t parent, uint32_t lane, uint32_t stream_count) {
  Hello hello;
  hello.parent = parent;
  hello.lane = lane;
  hello.stream_count = stream_count;
  return hello;
}

TEST(LaneScheduleTest, FixedLanesLogTheirChunksInOrderAtTheStart) {
  const Plan plan = TwoLanes();
  const LaneSchedule schedule(plan, 1);
  EXPECT_EQ(LogOf(schedule, 0), (std::vector<uint64_t>{0, 2, 4, 6}));
  EXPECT_EQ(LogOf(schedule, 1), (std::vector<uint64_t>{1, 3, 5, 7}));
  EXPECT_TRUE(schedule.EveryChunkLogged());
  EXPECT_EQ(schedule.ParentOf(0), 0);
  EXPECT_EQ(schedule.ParentOf(1), 2);
  EXPECT_TRUE(schedule.ReceivesAnyLane());
  EXPECT_FALSE(LaneSchedule(plan, 0).ReceivesAnyLane());
}

TEST(LaneScheduleTest, EachStreamCarriesItsShareOfTheLanesChunks) {
  const Plan plan = TwoLanes();
  const LaneSchedule schedule(plan, 2);
  // Lane 0 reaches member 2 on two streams: positions 0 and 2 on stream 0, 1 and 3 on stream 1.
  EXPECT_TRUE(schedule.Carries(0, 0, 0, 2));
  EXPECT_TRUE(schedule.Carries(0, 2, 1, 2));
  EXPECT_TRUE(schedule.Carries(0, 4, 0, 2));
  EXPECT_FALSE(schedule.Carries(0, 4, 1, 2));
  EXPECT_FALSE(schedule.Carries(0, 1, 0, 1));   // an odd chunk is lane 1's
  EXPECT_FALSE(schedule.Carries(0, 8, 0, 1));   // past the payload
  EXPECT_FALSE(schedule.Carries(0, ~0ull, 0, 1));
}

TEST(LaneScheduleTest, OnlyTheParentOfALaneWithThePlansStreamsIsAccepted) {
  const Plan plan = TwoLanes();
  const LaneSchedule schedule(plan, 2);
  EXPECT_TRUE(schedule.CheckParent(HelloFrom(1, 0, 2)).ok());
  EXPECT_TRUE(schedule.CheckParent(HelloFrom(0, 1, 1)).ok());
  EXPECT_EQ(schedule.CheckParent(HelloFrom(1, 0, 1)).code(), StatusCode::kInvalidArgument);  // streams
  EXPECT_EQ(schedule.CheckParent(HelloFrom(0, 0, 1)).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(schedule.CheckParent(HelloFrom(3, 1, 1)).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(schedule.CheckParent(HelloFrom(0, 2, 1)).code(), StatusCode::kInvalidArgument);  // no lane 2
  // What a parent says of itself is what its child accepts.
  const LaneSchedule parent(plan, 1);
  const PlanId id = PlanId::Random();
  const Hello hello = parent.HelloAsParent(id, 0, 1, 2);
  EXPECT_EQ(hello.plan_id, id);
  EXPECT_EQ(hello.parent, 1u);
  EXPECT_EQ(hello.stream, 1u);
  EXPECT_TRUE(schedule.CheckParent(hello).ok());
  // The source has no parent in any lane.
  EXPECT_EQ(LaneSchedule(plan, 0).CheckParent(HelloFrom(1, 0, 1)).code(), StatusCode::kPermissionDenied);
}

TEST(LaneScheduleTest, AChunkIsForwardedOnceEveryChildOfItsLaneHoldsIt) {
  const Plan plan = TwoLanes();
  LaneSchedule schedule(plan, 1);  // lane 0: children 2 and 3; lane 1: none
  EXPECT_FALSE(schedule.ForwardedToAll(2));
  EXPECT_FALSE(schedule.Delivered(0, 2, 2));
  EXPECT_FALSE(schedule.Delivered(0, 2, 2));  // said twice counts once
  EXPECT_TRUE(schedule.Delivered(0, 3, 2));
  EXPECT_TRUE(schedule.ForwardedToAll(2));
  EXPECT_TRUE(schedule.ForwardedToAll(3));  // lane 1's: member 1 is a leaf there
}

// Lane 0's 1 -> 2 edge moves to 0 -> 2 with three streams (member 1 failed), as each side sees it.
TEST(LaneScheduleTest, AMoveChangesTheTreeWhereItNamesThisMember) {
  const Plan plan = TwoLanes();
  const EdgeMove move{.lane = 0, .child = 2, .old_parent = 1, .new_parent = 0, .streams = 3};
  LaneSchedule child(plan, 2);
  child.ApplyMove(move);
  EXPECT_EQ(child.ParentOf(0), 0);
  EXPECT_EQ(child.CheckParent(HelloFrom(1, 0, 2)).code(), StatusCode::kPermissionDenied);  // the old parent
  EXPECT_EQ(child.CheckParent(HelloFrom(0, 0, 2)).code(), StatusCode::kInvalidArgument);   // the old streams
  EXPECT_TRUE(child.CheckParent(HelloFrom(0, 0, 3)).ok());
  EXPECT_TRUE(child.CheckParent(HelloFrom(0, 1, 1)).ok());  // lane 1 is as it was

  LaneSchedule old_parent(plan, 1);
  EXPECT_EQ(old_parent.ChildrenOf(0), (std::vector<LaneSchedule::Edge>{{2, 2}, {3, 1}}));
  EXPECT_FALSE(old_parent.Delivered(0, 2, 4));
  old_parent.ApplyMove(move);
  EXPECT_EQ(old_parent.ChildrenOf(0), (std::vector<LaneSchedule::Edge>{{3, 1}}));
  EXPECT_FALSE(old_parent.Delivered(0, 2, 2));  // a stopped sender's late word changes nothing
  EXPECT_FALSE(old_parent.ForwardedToAll(2));
  EXPECT_TRUE(old_parent.Delivered(0, 3, 2));    // member 3 alone is left to forward to
  EXPECT_TRUE(old_parent.ForwardedToAll(2));

  LaneSchedule new_parent(plan, 0);
  new_parent.ApplyMove(move);
  EXPECT_EQ(new_parent.ChildrenOf(0), (std::vector<LaneSchedule::Edge>{{1, 1}, {2, 3}}));
  EXPECT_EQ(new_parent.ChildrenOf(1), (std::vector<LaneSchedule::Edge>{{2, 1}}));
  new_parent.ApplyMove(move);  // applied twice: once
  EXPECT_EQ(new_parent.ChildrenOf(0).size(), 2u);

  LaneSchedule bystander(plan, 3);
  bystander.ApplyMove(move);
  EXPECT_EQ(bystander.ParentOf(0), 1);
  EXPECT_TRUE(bystander.ChildrenOf(0).empty());
  // Streams 0: the lane's default.
  LaneSchedule defaulted(plan, 2);
  defaulted.ApplyMove({.lane = 0, .child = 2, .old_parent = 1, .new_parent = 3, .streams = 0});
  EXPECT_TRUE(defaulted.CheckParent(HelloFrom(3, 0, static_cast<uint32_t>(plan.lanes[0].streams))).ok());
}

TEST(LaneScheduleTest, TheHeldPrefixOfALaneOnlyMovesForward) {
  const Plan plan = TwoLanes();
  LaneSchedule schedule(plan, 3);
  std::set<uint64_t> held = {0, 2, 6};
  const auto holds = [&](uint64_t chunk) { return held.count(chunk) != 0; };
  EXPECT_EQ(schedule.HeldPrefix(0, holds), 2u);  // chunks 0 and 2; 4 is missing
  EXPECT_EQ(schedule.HeldPrefix(1, holds), 0u);
  held.insert(4);
  EXPECT_EQ(schedule.HeldPrefix(0, holds), 4u);
  EXPECT_TRUE(schedule.HoldsWholeLane(0, holds));
  EXPECT_FALSE(schedule.HoldsWholeLane(1, holds));
}

TEST(LaneScheduleTest, SharedLanesClaimChunksAtThePaceOfTheirSlowestConnection) {
  const Plan plan = SharedLanes();
  LaneSchedule source(plan, 0);
  EXPECT_FALSE(source.EveryChunkLogged());
  EXPECT_TRUE(LogOf(source, 0).empty());
  LaneSchedule::Cursor fast, slow;
  source.AddCursor(0, &fast);
  source.AddCursor(0, &slow);
  EXPECT_TRUE(source.ClaimNext(0));   // both connections were handed everything (nothing)
  EXPECT_FALSE(source.ClaimNext(0));  // neither took chunk 0 yet
  fast.next_position = 1;
  EXPECT_FALSE(source.ClaimNext(0));  // the slow one holds the lane back
  slow.next_position = 1;
  EXPECT_TRUE(source.ClaimNext(0));
  EXPECT_TRUE(source.ClaimNext(1));   // lane 1 has no connection open: it takes one at once
  EXPECT_EQ(LogOf(source, 0), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(LogOf(source, 1), (std::vector<uint64_t>{2}));
  EXPECT_EQ(source.LoggedIn(2), 1);
  EXPECT_EQ(source.LoggedIn(3), -1);
  source.RemoveCursor(0, &slow);
  source.RemoveCursor(0, &fast);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(source.ClaimNext(0));
  EXPECT_FALSE(source.ClaimNext(0));  // every chunk claimed
  EXPECT_TRUE(source.EveryChunkLogged());
  // Only the source claims.
  EXPECT_FALSE(LaneSchedule(plan, 1).ClaimNext(0));
}

TEST(LaneScheduleTest, ASharedLaneLagsWhileMoreThanOneChunkWaitsForAConnection) {
  const Plan plan = SharedLanes();
  LaneSchedule member(plan, 1);  // lane 0's children: 2 and 3
  // Its edges in lane 0: two streams to member 2, one to member 3.
  LaneSchedule::Cursor to_child{.child = 3};
  LaneSchedule::Cursor first_stream{.stream_count = 2, .child = 2};
  LaneSchedule::Cursor second_stream{.stream_count = 2, .child = 2, .stream = 1};
  {
    LaneSchedule unopened(plan, 1);
    EXPECT_FALSE(unopened.Lags(0, 0));  // nothing logged yet
    EXPECT_TRUE(unopened.AddToLog(0, 0));
    EXPECT_TRUE(unopened.Lags(0, 0));   // it cannot pass chunks on before its edges are open...
    EXPECT_FALSE(unopened.Lags(0, 1));  // ... beyond the slack it is given for that
    EXPECT_FALSE(unopened.Lags(1, 0));  // a leaf there
  }
  EXPECT_TRUE(member.AddToLog(0, 0));
  member.AddCursor(0, &to_child);
  member.AddCursor(0, &first_stream);
  EXPECT_TRUE(member.Lags(0, 0));
  member.AddCursor(0, &second_stream);
  EXPECT_FALSE(member.Lags(0, 0));
  to_child.next_position = 1;
  member.RemoveCursor(0, &first_stream);  // done, or reconnecting: no longer waited for
  member.RemoveCursor(0, &second_stream);
  EXPECT_FALSE(member.Lags(0, 0));
  EXPECT_TRUE(member.AddToLog(0, 5));
  EXPECT_FALSE(member.AddToLog(1, 5));  // logged once, in the lane it came in
  EXPECT_FALSE(member.Lags(0, 0));  // one chunk waiting is no lag
  EXPECT_TRUE(member.AddToLog(0, 6));
  EXPECT_TRUE(member.Lags(0, 0));
  to_child.next_position = 2;
  EXPECT_FALSE(member.Lags(0, 0));
  // A frame of a chunk logged in the other lane is not this lane's; an unlogged one may be.
  EXPECT_TRUE(member.Carries(0, 5, 0, 1));
  EXPECT_FALSE(member.Carries(1, 5, 0, 1));
  EXPECT_TRUE(member.Carries(1, 7, 0, 1));
  member.RemoveCursor(0, &to_child);
  EXPECT_FALSE(member.Lags(0, 0));
}

}  // namespace
}  // namespace gridcast
