// Plan patches (collectives/plan_patch.h): for every broadcast planner, every member failed
// alone and every pair, at random holdings, the patch moves only the failed members' children,
// each once, to live members outside their own subtrees, and the patched plan still delivers
// every chunk to every member; the same inputs give the same patch; bad patches are refused.
#include "collectives/plan_patch.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <set>

#include "collectives/registry.h"
#include "collectives/validate_plan.h"
#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunk = 1 << 16;

// Two sites under a core (a fast uplink for the source's, a narrow one), every third NIC faster.
NetworkModel Sites(int p) {
  NetworkModel net = TwoSites((p + 1) / 2, p / 2, 100e6, 400e6, 150e6, 0);
  for (int i = 0; i < p; i += 3) net.nodes[i].up_bps = 300e6;
  return net;
}

PlanOptions Chunked() {
  PlanOptions options;
  options.chunk_bytes = kChunk;
  return options;
}

RepairInputs InputsFor(const Plan& plan, const NetworkModel& net, std::vector<Failure> failures, uint32_t seed) {
  RepairInputs in;
  in.net = &net;
  for (const std::string& name : plan.members) in.member_nodes.push_back(*net.FindNode(name));
  in.failures = std::move(failures);
  in.predicted_s = 10;
  std::mt19937 random(seed);
  in.lane_held.assign(plan.members.size(), std::vector<uint64_t>(plan.lanes.size()));
  for (int m = 0; m < static_cast<int>(plan.members.size()); ++m) {
    for (size_t l = 0; l < plan.lanes.size(); ++l) {
      const uint64_t count = plan.lanes[l].ChunkCount();
      in.lane_held[m][l] = plan.lanes[l].source == m ? count : random() % (count + 1);
    }
  }
  return in;
}

// The checks every patch must pass, against the plan it patches.
void ExpectSoundPatch(const Plan& plan, const RepairInputs& in, const std::string& what) {
  Result<PlanPatch> patch = PatchPlan(plan, in);
  ASSERT_TRUE(patch.ok()) << what << ": " << patch.status().ToString();
  std::set<int> failed;
  for (const Failure& f : in.failures) failed.insert(f.member);
  size_t orphans = 0;
  for (const Lane& lane : plan.lanes) {
    for (const Fanout& fanout : lane.fanouts) orphans += failed.count(fanout.parent) != 0 ? fanout.children.size() : 0;
  }
  std::set<int> slow;
  for (const Failure& f : in.failures) {
    if (f.reason == RepairReason::kSlow) slow.insert(f.member);
  }
  size_t orphan_moves = 0;
  std::set<std::pair<int, int>> moved, moved_slow;  // (lane, child)
  for (const EdgeMove& move : patch->moves) {
    const bool orphan = failed.count(move.old_parent) != 0;
    EXPECT_TRUE(orphan || slow.count(move.child) != 0) << what << ": only orphans and slow members move";
    EXPECT_EQ(failed.count(move.new_parent), 0u) << what;
    if (orphan) {
      ++orphan_moves;
      EXPECT_TRUE(moved.insert({move.lane, move.child}).second) << what << ": each orphan once";
    } else {
      EXPECT_TRUE(moved_slow.insert({move.lane, move.child}).second) << what << ": a slow member once a lane";
    }
  }
  ASSERT_EQ(orphan_moves, orphans) << what;
  Result<Plan> patched = ApplyPatch(plan, *patch);
  ASSERT_TRUE(patched.ok()) << what << ": " << patched.status().ToString();
  EXPECT_TRUE(ValidatePlan(*patched).ok()) << what;  // every chunk reaches every member: no cycle
  for (const Lane& lane : patched->lanes) {
    for (const Fanout& fanout : lane.fanouts) EXPECT_EQ(failed.count(fanout.parent), 0u) << what;
  }
  Result<PlanPatch> again = PatchPlan(plan, in);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *patch) << what << ": not deterministic";
}

TEST(PlanPatch, EveryPlannerEverySingleAndPairFailure) {
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind != PlannerKind::kBroadcast) continue;
    Result<std::unique_ptr<Planner>> planner = MakePlanner(info.name);
    ASSERT_TRUE(planner.ok());
    for (const bool sites : {false, true}) {
      for (int p = 2; p <= 33; ++p) {
        const NetworkModel net = sites ? Sites(p) : OneSwitch(p, 100e6);
        PlanOptions options;
        options.chunk_bytes = kChunk;
        Result<Plan> plan = (*planner)->MakePlan(net, 64 * kChunk + 3, options);
        ASSERT_TRUE(plan.ok()) << info.name << " " << p;
        if (plan->shared_chunks) continue;  // not patched (docs/repair.md, section 5)
        const std::string what = info.name + (sites ? " sites p=" : " flat p=") + std::to_string(p);
        const int source = plan->lanes.empty() ? 0 : plan->lanes[0].source;
        for (int a = 0; a < p; ++a) {
          if (a == source) continue;
          ExpectSoundPatch(*plan, InputsFor(*plan, net, {{a, RepairReason::kGone}}, a), what + " -" + std::to_string(a));
          if (p > 17) continue;
          for (int b = a + 1; b < p; ++b) {
            if (b == source) continue;
            ExpectSoundPatch(*plan, InputsFor(*plan, net, {{a, RepairReason::kGone}, {b, RepairReason::kSlow}}, a * p + b),
                             what + " -" + std::to_string(a) + " -" + std::to_string(b));
          }
        }
      }
    }
  }
}

// A chain's middle member fails: its child goes to a live member with upload to spare, ahead
// of it in the lane, never below it.
TEST(PlanPatch, AnOrphanGoesToALiveMemberAheadOfItWithUploadToSpare) {
  NetworkModel net = OneSwitch(5, 100e6);
  net.nodes[3].up_bps = 1e9;  // n3 has the most to spare
  Result<Plan> plan = (*MakePlanner("chain"))->MakePlan(net, 16 * kChunk, Chunked());
  ASSERT_TRUE(plan.ok());
  // n0 -> n1 -> n2 -> n3 -> n4; n2 fails: n3 (with n4 below it) needs a parent.
  RepairInputs in = InputsFor(*plan, net, {{2, RepairReason::kGone}}, 1);
  for (int m = 0; m < 5; ++m) in.lane_held[m][0] = 16 - 3 * static_cast<uint64_t>(m);
  Result<PlanPatch> patch = PatchPlan(*plan, in);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  ASSERT_EQ(patch->moves.size(), 1u);
  EXPECT_EQ(patch->moves[0].child, 3);
  EXPECT_EQ(patch->moves[0].old_parent, 2);
  EXPECT_NE(patch->moves[0].new_parent, 4) << "n4 is in n3's subtree";
  EXPECT_EQ(patch->moves[0].new_parent, 1) << "n0 and n1 are ahead; n1 sends to no one else once n2 is gone";
  // n1 far behind n3: the source, ahead, is chosen instead (at 0.8 mbit a lane, everyone has room).
  in.lane_held[1][0] = 0;
  EXPECT_EQ(PatchPlan(*plan, in)->moves[0].new_parent, 0);
  // At 84 mbit a lane the source has no room for a second child (it would halve the whole
  // chain's rate to the end): n1, behind, which catches up at the chain's rate.
  in.predicted_s = 0.1;
  EXPECT_EQ(PatchPlan(*plan, in)->moves[0].new_parent, 1);
  // With room at the source too, the one of the two that is ahead: the source.
  net.nodes[0].up_bps = 1e9;
  EXPECT_EQ(PatchPlan(*plan, in)->moves[0].new_parent, 0);
}

// Killed at once, the head of a lane leaves its children ahead of everyone but the source
// (flat16 at 50mbit, splitstream:2: core-1 heads lane 0, over core-3 and core-5). The source
// has room for one of them (core-1's lane no longer loads it), not both: the other goes to a
// member with room though it is behind.
TEST(PlanPatch, TheSourceTakesNoOrphanItHasNoRoomFor) {
  const NetworkModel net = OneSwitch(16, 50e6);
  Result<Plan> plan = (*MakePlanner("splitstream:2"))->MakePlan(net, 128 << 20, Chunked());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->lanes[0].ParentOf(1), 0);
  RepairInputs in = InputsFor(*plan, net, {{1, RepairReason::kGone}}, 1);
  in.predicted_s = 22;
  for (int m = 0; m < 16; ++m) in.lane_held[m] = {90, 90};
  in.lane_held[0] = {1024, 1024};
  for (const Fanout& fanout : plan->lanes[0].fanouts) {
    if (fanout.parent != 1) continue;
    ASSERT_EQ(fanout.children.size(), 2u);
    for (const int child : fanout.children) in.lane_held[child][0] = 100;
  }
  Result<PlanPatch> patch = PatchPlan(*plan, in);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  ASSERT_EQ(patch->moves.size(), 2u);
  EXPECT_NE(patch->moves[0].new_parent, patch->moves[1].new_parent) << "both under one parent";
  EXPECT_TRUE(patch->moves[0].new_parent == 0 || patch->moves[1].new_parent == 0);
}

// A straggler that is the source's only child in a lane (flat16 at 50mbit, splitstream:2:
// core-1 heads lane 0) keeps receiving, and held a lane's rate of the source's upload, which
// sets the bound: its children move, and so does it, to the member that is a leaf in both
// lanes. A straggler whose parent has as much to spare as anyone stays.
TEST(PlanPatch, AStragglerLeavesAParentWhoseUploadIsNeededMore) {
  const NetworkModel net = OneSwitch(16, 50e6);
  Result<Plan> plan = (*MakePlanner("splitstream:2"))->MakePlan(net, 128 << 20, Chunked());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->lanes.size(), 2u);
  ASSERT_EQ(plan->lanes[0].ParentOf(1), 0);
  RepairInputs in = InputsFor(*plan, net, {{1, RepairReason::kSlow}}, 1);
  in.lane_held.clear();
  in.predicted_s = 22;  // the source's 50mbit sets it: 64 MiB a lane at 24.4mbit
  Result<PlanPatch> patch = PatchPlan(*plan, in);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  std::optional<EdgeMove> off_the_source;
  for (const EdgeMove& move : patch->moves) {
    if (move.child == 1 && move.lane == 0) off_the_source = move;
  }
  ASSERT_TRUE(off_the_source.has_value());
  EXPECT_EQ(off_the_source->old_parent, 0);
  const int leaf = off_the_source->new_parent;
  for (const Lane& lane : plan->lanes) {
    for (const Fanout& fanout : lane.fanouts) EXPECT_NE(fanout.parent, leaf) << "it had children before";
  }
  Result<Plan> patched = ApplyPatch(*plan, *patch);
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_TRUE(ValidatePlan(*patched).ok());
  EXPECT_EQ(patched->lanes[0].ParentOf(1), leaf);
  // Gone instead, it takes nothing from the source: only its children move.
  in.failures = {{1, RepairReason::kGone}};
  patch = PatchPlan(*plan, in);
  ASSERT_TRUE(patch.ok());
  for (const EdgeMove& move : patch->moves) EXPECT_EQ(move.old_parent, 1);
}

TEST(PlanPatch, WhatCannotBeRepairedOrIsNoPatchIsRefused) {
  const NetworkModel net = OneSwitch(6, 100e6);
  Result<Plan> plan = (*MakePlanner("binary"))->MakePlan(net, 16 * kChunk, Chunked());
  ASSERT_TRUE(plan.ok());
  // The source: nothing can take its place.
  EXPECT_EQ(PatchPlan(*plan, InputsFor(*plan, net, {{0, RepairReason::kGone}}, 1)).status().code(),
            StatusCode::kFailedPrecondition);
  RepairInputs bad = InputsFor(*plan, net, {{9, RepairReason::kGone}}, 1);
  EXPECT_EQ(PatchPlan(*plan, bad).status().code(), StatusCode::kInvalidArgument);
  bad = InputsFor(*plan, net, {{1, RepairReason::kGone}}, 1);
  bad.predicted_s = 0;
  EXPECT_EQ(PatchPlan(*plan, bad).status().code(), StatusCode::kInvalidArgument);
  bad = InputsFor(*plan, net, {{1, RepairReason::kGone}}, 1);
  bad.member_nodes.pop_back();
  EXPECT_EQ(PatchPlan(*plan, bad).status().code(), StatusCode::kInvalidArgument);

  // Binary tree: 0 -> {1, 2}, 1 -> {3, 4}, 2 -> {5}. Each bad patch is the plan's first, so
  // only what is wrong with it can refuse it.
  ASSERT_EQ(plan->lanes.size(), 1u);
  ASSERT_EQ(plan->lanes[0].ParentOf(3), 1);
  ASSERT_EQ(plan->lanes[0].ParentOf(4), 1);
  const auto refused = [&](const PlanPatch& patch, const std::string& why) {
    const Result<Plan> applied = ApplyPatch(*plan, patch);
    EXPECT_FALSE(applied.ok()) << why;
    return applied.status().message();
  };
  PlanPatch patch;
  patch.version = 1;
  patch.failures = {{1, RepairReason::kGone}};
  patch.moves = {{0, 3, 2, 0, 0}, {0, 4, 1, 0, 0}};
  EXPECT_NE(refused(patch, "2 is not 3's parent").find("is not n2"), std::string::npos);
  patch.moves = {{0, 3, 1, 1, 0}, {0, 4, 1, 0, 0}};
  EXPECT_NE(refused(patch, "to the failed member").find("a failed or slow member"), std::string::npos);
  patch.moves = {{0, 3, 1, 0, 0}};
  EXPECT_NE(refused(patch, "the failed member keeps 4").find("still has children"), std::string::npos);
  patch.moves = {{0, 3, 1, 0, 0}, {0, 4, 1, 0, 0}};
  EXPECT_TRUE(ApplyPatch(*plan, patch).ok());
  patch.version = 2;  // not the one after the plan's last
  EXPECT_NE(refused(patch, "version").find("does not follow"), std::string::npos);
  // Into its own subtree: refused by the plan's own check (members cut off from the source).
  PlanPatch cycle;
  cycle.version = 1;
  cycle.moves = {{0, 1, 0, 3, 0}};
  EXPECT_NE(refused(cycle, "cycle").find("patched plan"), std::string::npos);
  PlanPatch out_of_range;
  out_of_range.version = 1;
  out_of_range.moves = {{7, 3, 1, 0, 0}};
  EXPECT_EQ(ValidatePatch(*plan, out_of_range).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
