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
  *slice.mutable_payload() = plan.payload();
  for (const v1::Lane& lane : plan.lanes()) {
    v1::Lane* cut = slice.add_lanes();
    cut->set_source(lane.source());
    cut->set_streams(lane.streams());
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

}  // namespace gridcast
