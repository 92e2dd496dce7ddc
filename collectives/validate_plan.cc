#include "collectives/validate_plan.h"

#include <set>
#include <string>
#include <vector>

namespace gridcast {
namespace {

std::string LaneName(size_t lane) { return "lane " + std::to_string(lane); }

Status ValidateTree(const Plan& plan, size_t lane_index) {
  const Lane& lane = plan.lanes[lane_index];
  const int p = static_cast<int>(plan.members.size());
  const std::string where = LaneName(lane_index);
  if (lane.source < 0 || lane.source >= p) {
    return Status::InvalidArgument(where + ": source " + std::to_string(lane.source) +
                                   " is not a member index (0.." + std::to_string(p - 1) + ")");
  }
  if (lane.streams < 1) return Status::InvalidArgument(where + ": streams must be >= 1");

  std::vector<int> parent(p, -1);
  std::vector<std::vector<int>> children(p);
  std::set<int> parents_seen;
  for (const Fanout& fanout : lane.fanouts) {
    if (fanout.parent < 0 || fanout.parent >= p) {
      return Status::InvalidArgument(where + ": parent " + std::to_string(fanout.parent) +
                                     " is not a member index");
    }
    if (!parents_seen.insert(fanout.parent).second) {
      return Status::InvalidArgument(where + ": member '" + plan.members[fanout.parent] +
                                     "' has two fanouts");
    }
    if (!fanout.streams.empty() && fanout.streams.size() != fanout.children.size()) {
      return Status::InvalidArgument(where + ": fanout of '" + plan.members[fanout.parent] +
                                     "' lists " + std::to_string(fanout.streams.size()) +
                                     " stream counts for " +
                                     std::to_string(fanout.children.size()) + " children");
    }
    for (int s : fanout.streams) {
      if (s < 1) return Status::InvalidArgument(where + ": stream counts must be >= 1");
    }
    for (int child : fanout.children) {
      if (child < 0 || child >= p) {
        return Status::InvalidArgument(where + ": child " + std::to_string(child) +
                                       " is not a member index");
      }
      if (child == lane.source) {
        return Status::InvalidArgument(where + ": the source '" + plan.members[child] +
                                       "' is given a parent");
      }
      if (parent[child] >= 0) {
        return Status::InvalidArgument(where + ": member '" + plan.members[child] +
                                       "' has two parents ('" + plan.members[parent[child]] +
                                       "' and '" + plan.members[fanout.parent] + "')");
      }
      parent[child] = fanout.parent;
      children[fanout.parent].push_back(child);
    }
  }
  // One parent each is not enough: a cycle detached from the source also has that. Walk down.
  std::vector<bool> reached(p, false);
  std::vector<int> stack = {lane.source};
  reached[lane.source] = true;
  int count = 1;
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    for (int c : children[v]) {
      if (!reached[c]) {
        reached[c] = true;
        ++count;
        stack.push_back(c);
      }
    }
  }
  if (count != p) {
    for (int v = 0; v < p; ++v) {
      if (!reached[v]) {
        return Status::InvalidArgument(where + ": member '" + plan.members[v] +
                                       "' is not reached from the source '" +
                                       plan.members[lane.source] + "'");
      }
    }
  }
  return Status::Ok();
}

Status ValidateRange(const ChunkRange& range, uint64_t num_chunks, const std::string& where) {
  if (range.step == 0) return Status::InvalidArgument(where + ": chunk range step 0");
  if (range.end > num_chunks) {
    return Status::InvalidArgument(where + ": chunk range ends at " + std::to_string(range.end) +
                                   " but the payload has " + std::to_string(num_chunks) +
                                   " chunks");
  }
  return Status::Ok();
}

// Every member but the source listed once; peers and stripes name real members and chunks; and
// every member reaches the source through peer links, so no member is left without a way to
// get a chunk. Stripes are a schedule, not a partition: a chunk in no stripe is still fetched.
Status ValidateSwarm(const Plan& plan) {
  const Swarm& swarm = plan.swarm;
  const int p = static_cast<int>(plan.members.size());
  if (swarm.source < 0 || swarm.source >= p) {
    return Status::InvalidArgument("swarm source " + std::to_string(swarm.source) +
                                   " is not a member index");
  }
  std::vector<int> entry(p, -1);
  std::vector<std::vector<int>> links(p);
  for (size_t i = 0; i < swarm.members.size(); ++i) {
    const SwarmMember& m = swarm.members[i];
    if (m.member < 0 || m.member >= p) {
      return Status::InvalidArgument("swarm entry " + std::to_string(i) + " names member " +
                                     std::to_string(m.member));
    }
    const std::string where = "swarm member '" + plan.members[m.member] + "'";
    if (m.member == swarm.source) return Status::InvalidArgument(where + " is the source");
    if (entry[m.member] >= 0) return Status::InvalidArgument(where + " is listed twice");
    entry[m.member] = static_cast<int>(i);
    std::set<int> seen;
    for (int peer : m.peers) {
      if (peer < 0 || peer >= p) {
        return Status::InvalidArgument(where + ": peer " + std::to_string(peer) +
                                       " is not a member index");
      }
      if (peer == m.member) return Status::InvalidArgument(where + " lists itself as a peer");
      if (!seen.insert(peer).second) {
        return Status::InvalidArgument(where + " lists peer '" + plan.members[peer] + "' twice");
      }
      links[m.member].push_back(peer);
      links[peer].push_back(m.member);
    }
    for (const ChunkRange& range : m.stripe) {
      GRIDCAST_RETURN_IF_ERROR(ValidateRange(range, plan.NumChunks(), where));
    }
  }
  for (int v = 0; v < p; ++v) {
    if (v != swarm.source && entry[v] < 0) {
      return Status::InvalidArgument("member '" + plan.members[v] + "' is not in the swarm");
    }
  }
  std::vector<bool> reached(p, false);
  std::vector<int> stack = {swarm.source};
  reached[swarm.source] = true;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int w : links[v]) {
      if (!reached[w]) {
        reached[w] = true;
        stack.push_back(w);
      }
    }
  }
  for (int v = 0; v < p; ++v) {
    if (!reached[v]) {
      return Status::InvalidArgument("swarm member '" + plan.members[v] +
                                     "' has no chain of peers to the source");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidatePlan(const Plan& plan) {
  if (plan.members.empty()) return Status::InvalidArgument("plan has no members");
  std::set<std::string> names;
  for (const std::string& name : plan.members) {
    if (name.empty()) return Status::InvalidArgument("plan has a member without a name");
    if (!names.insert(name).second) {
      return Status::InvalidArgument("member '" + name + "' is listed twice");
    }
  }
  if (plan.chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  if (plan.mode != PlanMode::kPush) GRIDCAST_RETURN_IF_ERROR(ValidateSwarm(plan));
  if (plan.mode == PlanMode::kPull) {
    if (!plan.lanes.empty()) return Status::InvalidArgument("a pull plan has no push lanes");
    return Status::Ok();
  }
  if (plan.lanes.empty()) return Status::InvalidArgument("plan has no lanes");

  const uint64_t n = plan.NumChunks();
  std::vector<int> owner(n, -1);
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    GRIDCAST_RETURN_IF_ERROR(ValidateTree(plan, l));
    for (const ChunkRange& range : plan.lanes[l].chunks) {
      GRIDCAST_RETURN_IF_ERROR(ValidateRange(range, n, LaneName(l)));
      for (uint64_t c = range.begin; c < range.end; c += range.step) {
        if (owner[c] >= 0) {
          return Status::InvalidArgument("chunk " + std::to_string(c) + " is in lane " +
                                         std::to_string(owner[c]) + " and lane " +
                                         std::to_string(l));
        }
        owner[c] = static_cast<int>(l);
      }
    }
  }
  for (uint64_t c = 0; c < n; ++c) {
    if (owner[c] < 0) return Status::InvalidArgument("chunk " + std::to_string(c) + " is in no lane");
  }
  return Status::Ok();
}

Status ValidatePlanOn(const Plan& plan, const NetworkModel& model) {
  GRIDCAST_RETURN_IF_ERROR(ValidatePlan(plan));
  for (const std::string& name : plan.members) {
    if (!model.FindNode(name)) {
      return Status::InvalidArgument("member '" + name + "' is not a node of the network");
    }
  }
  return Status::Ok();
}

}  // namespace gridcast
