// Plan slices as the control tree hands them down: every member, given the slice its control
// parent cut from its own slice, sees its own part of the plan exactly as the whole plan has
// it, and learns little else.
#include "proto/plan_slice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

#include "collectives/plan_patch.h"
#include "collectives/planners/swarm.h"
#include "daemon/coordinator/control_tree.h"
#include "proto/plan_codec.h"
#include "tests/unit/collectives/planners/plan_shape.h"

namespace gridcast {
namespace {

v1::Plan Whole(const Plan& plan) {
  v1::Plan proto;
  PlanToProto(plan, &proto);
  for (int i = 0; i < proto.members_size(); ++i) {
    v1::Member* m = proto.mutable_members(i);
    m->set_data_address("10.0.0." + std::to_string(i) + ":7000");
    m->set_bt_address("10.0.0." + std::to_string(i) + ":6881");
  }
  return proto;
}

// The slice member `m` gets: cut by each control parent on the way down from the source.
v1::Plan SliceAlongTheTree(const v1::Plan& whole, int m, int fanout) {
  std::vector<int> path;
  for (int at = m; at > 0; at = ControlParent(at, fanout)) path.push_back(at);
  v1::Plan slice = whole;
  const int members = static_cast<int>(WholeMemberCount(whole));
  for (auto it = path.rbegin(); it != path.rend(); ++it) slice = SlicePlan(slice, ControlSubtree(*it, members, fanout));
  return slice;
}

// What member m acts on: per lane its parent, its fanout and whom it names; its swarm entry.
void ExpectSameView(const Plan& whole, const Plan& part, int m) {
  ASSERT_EQ(part.members.size(), whole.members.size());
  ASSERT_EQ(part.lanes.size(), whole.lanes.size());
  EXPECT_EQ(part.members[m], whole.members[m]);
  EXPECT_EQ(part.shared_chunks, whole.shared_chunks);
  EXPECT_EQ(part.window_chunks, whole.window_chunks);
  for (size_t l = 0; l < whole.lanes.size(); ++l) {
    const Lane& a = whole.lanes[l];
    const Lane& b = part.lanes[l];
    EXPECT_EQ(b.chunks, a.chunks);
    EXPECT_EQ(b.source, a.source);
    const int parent = a.ParentOf(m);
    EXPECT_EQ(b.ParentOf(m), parent) << "lane " << l << " member " << m;
    if (parent >= 0) {
      EXPECT_EQ(part.members[parent], whole.members[parent]);
    }
    for (const Fanout& fanout : a.fanouts) {
      if (fanout.parent == m) {
        auto same = std::find_if(b.fanouts.begin(), b.fanouts.end(), [&](const Fanout& f) { return f.parent == m; });
        ASSERT_NE(same, b.fanouts.end());
        EXPECT_EQ(*same, fanout);
        for (int child : fanout.children) EXPECT_EQ(part.members[child], whole.members[child]);
      }
      auto at = std::find(fanout.children.begin(), fanout.children.end(), m);
      if (at == fanout.children.end()) continue;
      const size_t i = static_cast<size_t>(at - fanout.children.begin());
      for (const Fanout& f : b.fanouts) {
        if (f.parent != fanout.parent) continue;
        const auto mine = std::find(f.children.begin(), f.children.end(), m);
        ASSERT_NE(mine, f.children.end());
        EXPECT_EQ(b.StreamsOn(f, static_cast<size_t>(mine - f.children.begin())), a.StreamsOn(fanout, i));
      }
    }
  }
  if (!whole.HasSwarm() || m == whole.swarm.source) return;
  auto entry_of = [m](const Swarm& s) {
    return std::find_if(s.members.begin(), s.members.end(), [m](const SwarmMember& e) { return e.member == m; });
  };
  auto a = entry_of(whole.swarm);
  auto b = entry_of(part.swarm);
  ASSERT_NE(b, part.swarm.members.end());
  EXPECT_EQ(b->peers, a->peers);
  EXPECT_EQ(b->stripe, a->stripe);
  for (int peer : a->peers) EXPECT_EQ(part.members[peer], whole.members[peer]);
  EXPECT_EQ(part.members[whole.swarm.source], whole.members[whole.swarm.source]);
}

// Pull plans take BitTorrent pieces: 64 of 16 KiB.
Plan Pull(int p) {
  PlanOptions options;
  options.chunk_bytes = 16 << 10;
  Result<Plan> swarm = SwarmPlanner(false).MakePlan(FlatNetwork(p), 64 * options.chunk_bytes, options);
  EXPECT_TRUE(swarm.ok()) << swarm.status().ToString();
  return swarm.ok() ? *swarm : Plan{};
}

// Push lanes with a swarm repairing them, as the coordinator makes them.
Plan Hybrid(int p) {
  Plan plan = ShapePlan("multilane", p, 64);
  plan.chunk_bytes = 16 << 10;
  plan.payload_bytes = 64 * plan.chunk_bytes;
  plan.swarm = Pull(p).swarm;
  plan.mode = PlanMode::kHybrid;
  return plan;
}

class PlanSliceTest : public ::testing::TestWithParam<std::tuple<std::string, int, int>> {};

TEST_P(PlanSliceTest, EveryMemberSeesItsOwnPartAsTheWholePlanHasIt) {
  const auto& [planner, p, fanout] = GetParam();
  Plan plan = planner == "hybrid" ? Hybrid(p) : planner == "swarm" ? Pull(p) : ShapePlan(planner, p, 64);
  if (planner == "splitstream:2") {  // as upload-packing makes its lanes
    plan.shared_chunks = true;
    plan.window_chunks = 3;
  }
  ASSERT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan).ToString();
  const v1::Plan whole = Whole(plan);
  size_t largest_leaf = 0;
  for (int m = 1; m < p; ++m) {
    const v1::Plan slice = SliceAlongTheTree(whole, m, fanout);
    EXPECT_EQ(WholeMemberCount(slice), static_cast<uint32_t>(p));
    Result<Plan> part = PlanPartFromProto(slice, m);
    ASSERT_TRUE(part.ok()) << planner << " member " << m << ": " << part.status().ToString();
    ExpectSameView(plan, *part, m);
    for (int below : ControlSubtree(m, p, fanout)) {
      ASSERT_NE(FindMember(slice, static_cast<uint32_t>(below)), nullptr) << "member " << m << " lacks " << below;
      EXPECT_EQ(FindMember(slice, static_cast<uint32_t>(below))->data_address(),
                whole.members(below).data_address());
    }
    if (ControlChildren(m, p, fanout).empty()) largest_leaf = std::max<size_t>(largest_leaf, slice.members_size());
  }
  // A leaf learns of a handful of members, not of all of them (a pull member of its peers).
  EXPECT_LT(largest_leaf, planner == "hybrid" ? 32u : planner == "swarm" ? 24u : 12u) << planner;
}

INSTANTIATE_TEST_SUITE_P(Planners, PlanSliceTest,
                         ::testing::Values(std::make_tuple("multilane", 100, 8), std::make_tuple("splitstream:2", 100, 8),
                                           std::make_tuple("binary", 60, 3), std::make_tuple("chain", 40, 2),
                                           std::make_tuple("flat", 30, 4), std::make_tuple("swarm", 80, 8),
                                           std::make_tuple("hybrid", 80, 8), std::make_tuple("multilane", 9, 8)));

TEST(PlanSlice, TheSourcesSlicesTogetherWeighLessThanHalfOfKWholePlans) {
  const int p = 1000;
  const v1::Plan whole = Whole(ShapePlan("multilane", p, 16));
  size_t sent = 0;
  for (int child : ControlChildren(0, p, 8)) sent += SlicePlan(whole, ControlSubtree(child, p, 8)).ByteSizeLong();
  // Each slice lists its subtree and their tree neighbours in other subtrees: about 3 plans'
  // worth in all at 1,000 members, where the whole plan to each child was 8.
  EXPECT_LT(sent, 4 * whole.ByteSizeLong());
  EXPECT_GT(sent, whole.ByteSizeLong());
}

TEST(PlanSlice, AWholePlanIsRefusedWhereOnlyASliceIsExpectedAndBack) {
  const v1::Plan whole = Whole(ShapePlan("multilane", 20, 8));
  const v1::Plan slice = SlicePlan(whole, {5});
  EXPECT_TRUE(PlanFromProto(whole).ok());
  EXPECT_EQ(PlanFromProto(slice).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(PlanPartFromProto(whole, 5).ok());
  EXPECT_TRUE(PlanPartFromProto(slice, 5).ok());
  // The slice is of member 5's part: another member's part is not in it.
  EXPECT_EQ(PlanPartFromProto(slice, 19).status().code(), StatusCode::kInvalidArgument);
}

TEST(PlanSlice, MalformedSlicesAreRefused) {
  const v1::Plan whole = Whole(ShapePlan("multilane", 20, 8));
  const v1::Plan good = SlicePlan(whole, {5});
  ASSERT_TRUE(PlanPartFromProto(good, 5).ok());
  auto refused = [](const v1::Plan& slice, const std::string& fragment) {
    Result<Plan> part = PlanPartFromProto(slice, 5);
    ASSERT_EQ(part.status().code(), StatusCode::kInvalidArgument) << fragment;
    EXPECT_NE(part.status().message().find(fragment), std::string::npos) << part.status().message();
  };
  v1::Plan bad = good;
  bad.add_member_index(19);
  refused(bad, "indices");
  bad = good;
  bad.set_member_index(0, bad.member_index(1));
  refused(bad, "not increasing");
  bad = good;
  bad.set_member_index(bad.member_index_size() - 1, 20);
  refused(bad, "not increasing below the member count");
  bad = good;
  bad.set_member_count(200000);
  refused(bad, "too many members");
  bad = good;
  bad.mutable_members(0)->clear_name();
  refused(bad, "without a name");
  bad = good;
  bad.set_window_chunks(1u << 20);
  refused(bad, "plan window of 1048576 chunks");
  // Its parent in a lane not named: it could not check who connects.
  const int parent = ShapePlan("multilane", 20, 8).lanes[0].ParentOf(5);
  bad = good;
  v1::Plan trimmed;
  for (int i = 0; i < good.members_size(); ++i) {
    if (good.member_index(i) == static_cast<uint32_t>(parent)) continue;
    *trimmed.add_members() = good.members(i);
    trimmed.add_member_index(good.member_index(i));
  }
  bad.clear_members();
  bad.clear_member_index();
  bad.MergeFrom(trimmed);
  refused(bad, "its parent");
  // Not given a parent in a lane at all.
  bad = good;
  for (v1::Fanout& f : *bad.mutable_lanes(0)->mutable_fanouts()) {
    auto* children = f.mutable_children();
    auto it = std::find(children->begin(), children->end(), 5u);
    if (it == children->end()) continue;
    children->erase(it);
    f.clear_streams();
  }
  refused(bad, "has no parent");
}

}  // namespace
}  // namespace gridcast

namespace gridcast {
namespace {

// A plan's lanes with each lane's fanouts in parent order, and its members as (index, name,
// address): what a slice means, whatever order its fanouts came in.
std::string Canonical(const v1::Plan& plan) {
  std::string out = "patch " + std::to_string(plan.patch_version()) + "\n";
  for (const v1::Lane& lane : plan.lanes()) {
    std::vector<std::string> fanouts;
    for (const v1::Fanout& f : lane.fanouts()) fanouts.push_back(f.ShortDebugString());
    std::sort(fanouts.begin(), fanouts.end());
    for (const std::string& f : fanouts) out += f + "\n";
    out += "--\n";
  }
  for (int i = 0; i < plan.members_size(); ++i) {
    out += std::to_string(WholeIndexOf(plan, i)) + " " + plan.members(i).ShortDebugString() + "\n";
  }
  return out;
}

// Patching a slice is slicing the patched plan: for plans of several planners, random
// failures (PatchPlan's patches) and every member's control subtree.
TEST(PlanSlicePatch, APatchedSliceIsTheSliceOfThePatchedPlan) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  for (const auto& [planner, p, fanout] :
       std::vector<std::tuple<std::string, int, int>>{{"multilane", 40, 4}, {"binary", 30, 3}, {"chain", 12, 2},
                                                      {"splitstream:2", 33, 8}}) {
    const Plan plan = ShapePlan(planner, p, 64);
    net.nodes.clear();
    for (const std::string& name : plan.members) net.nodes.push_back({name, 0, 100e6, 100e6});
    const v1::Plan whole = Whole(plan);
    std::mt19937 random(static_cast<uint32_t>(p));
    for (int round = 0; round < 6; ++round) {
      RepairInputs in;
      in.net = &net;
      for (int m = 0; m < p; ++m) in.member_nodes.push_back(m);
      in.predicted_s = 5;
      in.failures.push_back({1 + static_cast<int>(random() % (p - 1)), RepairReason::kGone});
      if (round % 2 == 1) in.failures.push_back({1 + static_cast<int>(random() % (p - 1)), RepairReason::kSlow});
      if (in.failures.size() == 2 && in.failures[0].member == in.failures[1].member) in.failures.pop_back();
      Result<PlanPatch> patch = PatchPlan(plan, in);
      ASSERT_TRUE(patch.ok()) << planner << ": " << patch.status().ToString();
      Result<Plan> patched = ApplyPatch(plan, *patch);
      ASSERT_TRUE(patched.ok()) << patched.status().ToString();
      v1::Plan patched_whole = Whole(*patched);
      v1::PlanPatch wire;
      PatchToProto(*patch, &wire);
      std::set<int> named;
      for (const EdgeMove& move : patch->moves) named.insert({move.child, move.old_parent, move.new_parent});
      for (const int m : named) {
        *wire.add_members() = whole.members(m);
        wire.add_member_index(static_cast<uint32_t>(m));
      }
      Result<PlanPatch> decoded = PatchFromProto(wire, static_cast<size_t>(p), plan.lanes.size());
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      EXPECT_EQ(*decoded, *patch);
      for (int m = 1; m < p; ++m) {
        const std::vector<int> subtree = ControlSubtree(m, p, fanout);
        v1::Plan slice = SlicePlan(SliceAlongTheTree(whole, m, fanout), subtree);
        ApplyPatchToSlice(&slice, wire, subtree);
        const v1::Plan expected = SlicePlan(SliceAlongTheTree(patched_whole, m, fanout), subtree);
        ASSERT_EQ(Canonical(slice), Canonical(expected)) << planner << " member " << m << " round " << round;
        Result<Plan> part = PlanPartFromProto(slice, m);
        ASSERT_TRUE(part.ok()) << part.status().ToString();
        EXPECT_EQ(part->patch_version, patch->version);
      }
    }
  }
}

TEST(PlanSlicePatch, MalformedPatchesAreRefused) {
  v1::PlanPatch wire;
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);  // version 0
  wire.set_version(1);
  v1::EdgeMove* move = wire.add_moves();
  move->set_lane(2);
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);  // no lane 2
  move->set_lane(1);
  move->set_new_parent(4);
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);  // no member 4
  move->set_new_parent(3);
  move->set_streams(65);
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);
  move->set_streams(2);
  EXPECT_TRUE(PatchFromProto(wire, 4, 2).ok());
  wire.add_failures()->set_member(1);  // no reason
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);
  wire.mutable_failures(0)->set_reason(v1::REPAIR_REASON_SLOW);
  wire.mutable_failures(0)->set_measured_bps(-1);
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);
  for (int i = 0; i < 9; ++i) *wire.add_moves() = *move;
  EXPECT_EQ(PatchFromProto(wire, 4, 2).status().code(), StatusCode::kInvalidArgument);  // more than 4 x 2
}

}  // namespace
}  // namespace gridcast
