#include "proto/plan_slice.h"

#include <algorithm>
#include <set>
#include <unordered_set>

namespace gridcast {

uint32_t WholeMemberCount(const v1::Plan& plan) {
  return plan.member_count() > 0 ? plan.member_count() : static_cast<uint32_t>(plan.members_size());
}

uint32_t WholeIndexOf(const v1::Plan& plan, int entry) {
  return plan.member_count() > 0 ? plan.member_index(entry) : static_cast<uint32_t>(entry);
}

const v1::Member* FindMember(const v1::Plan& plan, uint32_t index) {
  if (plan.member_count() == 0) {
    return index < static_cast<uint32_t>(plan.members_size()) ? &plan.members(static_cast<int>(index)) : nullptr;
  }
  const auto& indices = plan.member_index();
  auto it = std::lower_bound(indices.begin(), indices.end(), index);
  if (it == indices.end() || *it != index) return nullptr;
  return &plan.members(static_cast<int>(it - indices.begin()));
}

v1::Plan SlicePlan(const v1::Plan& plan, const std::vector<int>& subtree) {
  const std::unordered_set<uint32_t> inside(subtree.begin(), subtree.end());
  std::set<uint32_t> named(inside.begin(), inside.end());  // the members the slice lists
  v1::Plan slice;
  slice.set_plan_id(plan.plan_id());
  slice.set_algorithm(plan.algorithm());
  slice.set_rationale(plan.rationale());
  slice.set_mode(plan.mode());
  slice.set_shared_chunks(plan.shared_chunks());
  slice.set_window_chunks(plan.window_chunks());
  slice.set_patch_version(plan.patch_version());
  *slice.mutable_payload() = plan.payload();
  for (const v1::Lane& lane : plan.lanes()) {
    v1::Lane* cut = slice.add_lanes();
    cut->set_source(lane.source());
    cut->set_streams(lane.streams());
    cut->set_planned_bps(lane.planned_bps());
    *cut->mutable_chunks() = lane.chunks();
    named.insert(lane.source());
    for (const v1::Fanout& fanout : lane.fanouts()) {
      if (inside.count(fanout.parent()) != 0) {
        *cut->add_fanouts() = fanout;
        named.insert(fanout.parent());
        named.insert(fanout.children().begin(), fanout.children().end());
        continue;
      }
      // A parent outside: its children inside need to know it, and their own stream counts.
      const bool per_child_streams = fanout.streams_size() == fanout.children_size();
      v1::Fanout* kept = nullptr;
      for (int i = 0; i < fanout.children_size(); ++i) {
        if (inside.count(fanout.children(i)) == 0) continue;
        if (kept == nullptr) {
          kept = cut->add_fanouts();
          kept->set_parent(fanout.parent());
          named.insert(fanout.parent());
        }
        kept->add_children(fanout.children(i));
        if (per_child_streams) kept->add_streams(fanout.streams(i));
      }
    }
  }
  if (plan.has_swarm()) {
    const v1::Swarm& swarm = plan.swarm();
    v1::Swarm* cut = slice.mutable_swarm();
    cut->set_source(swarm.source());
    cut->set_free_choice(swarm.free_choice());
    cut->set_source_upload_slots(swarm.source_upload_slots());
    named.insert(swarm.source());
    for (const v1::SwarmMember& entry : swarm.members()) {
      if (inside.count(entry.member()) == 0) continue;
      *cut->add_members() = entry;
      named.insert(entry.peers().begin(), entry.peers().end());
    }
  }
  for (uint32_t index : named) {
    const v1::Member* member = FindMember(plan, index);
    if (member == nullptr) continue;  // not in the given slice: the receiver's checks name it
    *slice.add_members() = *member;
    slice.add_member_index(index);
  }
  slice.set_member_count(WholeMemberCount(plan));
  return slice;
}

namespace {

// The patch's move applied to one lane of a plan or slice: the child leaves its old parent's
// fanout (dropped when emptied) and joins the new parent's, made at the end when there is none.
void MoveInLane(v1::Lane* lane, const v1::EdgeMove& move) {
  auto& fanouts = *lane->mutable_fanouts();
  for (v1::Fanout& fanout : fanouts) {
    if (fanout.parent() != move.old_parent()) continue;
    for (int i = 0; i < fanout.children_size(); ++i) {
      if (fanout.children(i) != move.child()) continue;
      if (fanout.streams_size() == fanout.children_size()) fanout.mutable_streams()->erase(fanout.streams().begin() + i);
      fanout.mutable_children()->erase(fanout.children().begin() + i);
      break;
    }
  }
  fanouts.erase(std::remove_if(fanouts.begin(), fanouts.end(), [](const v1::Fanout& f) { return f.children_size() == 0; }),
                fanouts.end());
  v1::Fanout* target = nullptr;
  for (v1::Fanout& fanout : fanouts) {
    if (fanout.parent() == move.new_parent()) target = &fanout;
  }
  if (target == nullptr) {
    target = lane->add_fanouts();
    target->set_parent(move.new_parent());
  }
  const uint32_t default_streams = lane->streams() == 0 ? 1 : lane->streams();
  const uint32_t streams = move.streams() > 0 ? move.streams() : default_streams;
  if (target->streams_size() == 0 && streams != default_streams) {
    for (int i = 0; i < target->children_size(); ++i) target->add_streams(default_streams);
  }
  target->add_children(move.child());
  if (target->streams_size() > 0) target->add_streams(streams);
}

}  // namespace

void ApplyPatchToSlice(v1::Plan* slice, const v1::PlanPatch& patch, const std::vector<int>& subtree) {
  for (const v1::EdgeMove& move : patch.moves()) {
    if (move.lane() >= static_cast<uint32_t>(slice->lanes_size())) continue;
    MoveInLane(slice->mutable_lanes(static_cast<int>(move.lane())), move);
  }
  slice->set_patch_version(std::max(slice->patch_version(), patch.version()));
  // Cut again as SlicePlan cuts (fanouts the subtree does not need go), listing the members it
  // names from the slice's entries and the patch's.
  v1::Plan known = *slice;
  for (int i = 0; i < patch.members_size() && i < patch.member_index_size(); ++i) {
    if (FindMember(known, patch.member_index(i)) != nullptr) continue;
    *known.add_members() = patch.members(i);
    known.add_member_index(patch.member_index(i));
  }
  if (known.member_count() > 0) {  // keep the slice's member_index increasing
    std::vector<std::pair<uint32_t, v1::Member>> entries;
    for (int i = 0; i < known.members_size(); ++i) entries.emplace_back(known.member_index(i), known.members(i));
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    known.clear_members();
    known.clear_member_index();
    for (auto& [index, member] : entries) {
      known.add_member_index(index);
      *known.add_members() = std::move(member);
    }
  }
  *slice = SlicePlan(known, subtree);
}

}  // namespace gridcast
