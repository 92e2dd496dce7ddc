// SimulateFrom and SimulateUntil (a run from what members hold, with members absent), and
// PredictRepair (a failure, then a patch) built on them.
#include <gtest/gtest.h>

#include "collectives/bound.h"
#include "collectives/registry.h"
#include "collectives/repair_prediction.h"
#include "collectives/simulator/simulator.h"
#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunk = 256 << 10;

Plan PlanOf(const std::string& algo, const NetworkModel& net, uint64_t bytes) {
  PlanOptions options;
  options.chunk_bytes = kChunk;
  Result<Plan> plan = (*MakePlanner(algo))->MakePlan(net, bytes, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

SimOptions ChunkLevel() {
  SimOptions options;
  options.mode = SimMode::kChunkLevel;
  options.per_message_overhead_s = kDaemonPerChunkOverheadS;
  return options;
}

TEST(SimulateFrom, FromNothingItIsTheChunkLevelSimulation) {
  const NetworkModel net = OneSwitch(9, 100e6);
  for (const char* algo : {"chain", "binary", "multilane", "splitstream:2"}) {
    const Plan plan = PlanOf(algo, net, 40 * kChunk + 7);
    Result<SimResult> from = SimulateFrom(plan, net, ChunkLevel(), SimStart{});
    Result<SimResult> whole = SimulatePlan(plan, net, ChunkLevel());
    ASSERT_TRUE(from.ok() && whole.ok());
    EXPECT_EQ(from->member_completion_s, whole->member_completion_s) << algo;
    // Stopped part-way and resumed from what had arrived: no faster, and late by at most the
    // chunks that were on their way (a chunk per hop).
    for (const double fraction : {0.2, 0.5, 0.9}) {
      const double at = fraction * whole->completion_s;
      Result<SimStart> state = SimulateUntil(plan, net, ChunkLevel(), SimStart{}, at);
      ASSERT_TRUE(state.ok());
      Result<SimResult> rest = SimulateFrom(plan, net, ChunkLevel(), *state);
      ASSERT_TRUE(rest.ok()) << rest.status().ToString();
      EXPECT_GE(at + rest->completion_s, whole->completion_s * (1 - 1e-9)) << algo << " " << fraction;
      EXPECT_LE(at + rest->completion_s, whole->completion_s * 1.10) << algo << " " << fraction;
    }
    Result<SimStart> end = SimulateUntil(plan, net, ChunkLevel(), SimStart{}, whole->completion_s);
    for (size_t m = 0; m < plan.members.size(); ++m) {
      for (size_t l = 0; l < plan.lanes.size(); ++l) EXPECT_EQ(end->lane_held[m][l], plan.lanes[l].ChunkCount());
    }
  }
}

TEST(SimulateFrom, HoldingsAbsentMembersAndBadStarts) {
  const NetworkModel net = OneSwitch(5, 100e6);
  const Plan chain = PlanOf("chain", net, 20 * kChunk);  // n0 -> n1 -> n2 -> n3 -> n4
  SimStart start;
  start.lane_held.assign(5, {0});
  start.lane_held[3] = {20};  // n3 holds everything
  Result<SimResult> run = SimulateFrom(chain, net, ChunkLevel(), start);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->member_completion_s[3], 0);
  EXPECT_GT(run->member_completion_s[4], 0);
  EXPECT_LT(run->member_completion_s[4], run->member_completion_s[2]) << "n4 is fed from n3 at once";
  // An absent member cuts its subtree off: no prediction without a patch.
  start = SimStart{};
  start.absent = {false, false, true, false, false};
  EXPECT_EQ(SimulateFrom(chain, net, ChunkLevel(), start).status().code(), StatusCode::kFailedPrecondition);
  start.absent = {false, false, false, false, true};  // a leaf: the others finish
  Result<SimResult> without_leaf = SimulateFrom(chain, net, ChunkLevel(), start);
  ASSERT_TRUE(without_leaf.ok());
  EXPECT_EQ(without_leaf->member_completion_s[4], 0);
  start.absent = {true};
  EXPECT_EQ(SimulateFrom(chain, net, ChunkLevel(), start).status().code(), StatusCode::kInvalidArgument);
  start = SimStart{};
  start.lane_held.assign(5, {21});
  EXPECT_EQ(SimulateFrom(chain, net, ChunkLevel(), start).status().code(), StatusCode::kInvalidArgument);
}

// The case in miniature: 16 members at 50 Mbit/s, splitstream:2, an interior member
// failed 30% in and patched 1.5 s later. The survivors finish, later than without the failure,
// and the prediction is deterministic.
TEST(PredictRepair, AFailedInteriorMembersChildrenAreReFedAndTheSurvivorsFinish) {
  const NetworkModel net = OneSwitch(16, 50e6);
  const Plan plan = PlanOf("splitstream:2", net, 64 * kChunk);
  int interior = -1;
  for (const Fanout& fanout : plan.lanes[0].fanouts) {
    if (fanout.parent != plan.lanes[0].source) interior = fanout.parent;
  }
  ASSERT_GE(interior, 0);
  Result<RepairPrediction> prediction = PredictRepair(plan, net, ChunkLevel(), {interior}, 0.3 * 2.7, 1.5);
  ASSERT_TRUE(prediction.ok()) << prediction.status().ToString();
  EXPECT_FALSE(prediction->patch.moves.empty());
  EXPECT_GT(prediction->completion_s, prediction->healthy_s);
  std::vector<int> survivors;
  for (int n = 0; n < 16; ++n) {
    if (n != interior) survivors.push_back(n);
  }
  const double bound = BroadcastBoundSeconds(net, 0, survivors, plan.payload_bytes);
  std::printf("healthy %.2f s, one failed at 30%%: %.2f s, survivors' bound %.2f s (ratio %.3f)\n",
              prediction->healthy_s, prediction->completion_s, bound, prediction->completion_s / bound);
  Result<RepairPrediction> again = PredictRepair(plan, net, ChunkLevel(), {interior}, 0.3 * 2.7, 1.5);
  EXPECT_EQ(again->completion_s, prediction->completion_s);
  EXPECT_EQ(PredictRepair(plan, net, ChunkLevel(), {plan.lanes[0].source}, 1, 1).status().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gridcast
