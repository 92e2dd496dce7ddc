#include "collectives/validate_plan.h"

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gridcast {

Status CheckChunkBytes(uint64_t chunk_bytes) {
  if (chunk_bytes == 0 || chunk_bytes > kMaxChunkBytes) {
    return Status::InvalidArgument("a chunk must be from 1 byte to 64 MiB, not " + std::to_string(chunk_bytes) +
                                   " bytes");
  }
  return Status::Ok();
}

Status CheckPieceBytes(uint64_t piece_bytes) {
  if (piece_bytes < kMinPieceBytes || piece_bytes > kMaxChunkBytes || !std::has_single_bit(piece_bytes)) {
    return Status::InvalidArgument("a pull or hybrid chunk (a BitTorrent piece) must be a power of two from 16 KiB "
                                   "to 64 MiB, not " + std::to_string(piece_bytes) + " bytes");
  }
  return Status::Ok();
}

uint64_t SmallestChunkBytes(uint64_t payload_bytes, bool swarm) {
  const uint64_t most = swarm ? kMaxSwarmPieces : kMaxPlanChunks;
  const uint64_t smallest = std::bit_ceil(std::max<uint64_t>((payload_bytes + most - 1) / most, 1));
  return swarm ? std::max(smallest, kMinPieceBytes) : smallest;
}

Status CheckChunkCount(uint64_t payload_bytes, uint64_t chunk_bytes, bool swarm) {
  if (chunk_bytes == 0) return CheckChunkBytes(chunk_bytes);
  const uint64_t chunks = (payload_bytes + chunk_bytes - 1) / chunk_bytes;
  const uint64_t most = swarm ? kMaxSwarmPieces : kMaxPlanChunks;
  if (chunks <= most) return Status::Ok();
  const std::string what = swarm ? "pieces" : "chunks";
  const uint64_t smallest = SmallestChunkBytes(payload_bytes, swarm);
  if (smallest > kMaxChunkBytes) {
    return Status::InvalidArgument("a payload of " + std::to_string(payload_bytes) + " bytes makes more than " +
                                   std::to_string(most) + " " + what + " even of 64 MiB" +
                                   (swarm ? ": too large for a swarm (send it with --mode push)" : ""));
  }
  return Status::InvalidArgument("a payload of " + std::to_string(payload_bytes) + " bytes in chunks of " +
                                 std::to_string(chunk_bytes) + " bytes makes " + std::to_string(chunks) + " " + what +
                                 ", more than " + std::to_string(most) + ": chunks of " + std::to_string(smallest) +
                                 " bytes or more fit");
}

namespace {

std::string LaneName(size_t lane) { return "lane " + std::to_string(lane); }

// How a message names member m: by name, or by index where the plan holds no name for it (a
// slice names only the members its receiver deals with).
std::string Who(const Plan& plan, int m) {
  return plan.members[m].empty() ? "member " + std::to_string(m) : "member '" + plan.members[m] + "'";
}

// The rules of one lane that hold for any part of it: indices in range, stream counts >= 1, no
// member with two fanouts or two parents, the source given none. Fills `parent` with the parent
// of each child listed. Memory is in what the lane lists, not in the plan's members (a slice of
// a plan of 100,000 members lists a few).
Status CheckFanouts(const Plan& plan, size_t lane_index, std::unordered_map<int, int>* parent) {
  const Lane& lane = plan.lanes[lane_index];
  const int p = static_cast<int>(plan.members.size());
  const std::string where = LaneName(lane_index);
  if (lane.source < 0 || lane.source >= p) {
    return Status::InvalidArgument(where + ": source " + std::to_string(lane.source) +
                                   " is not a member index (0.." + std::to_string(p - 1) + ")");
  }
  if (lane.streams < 1) return Status::InvalidArgument(where + ": streams must be >= 1");
  std::unordered_set<int> parents_seen;
  for (const Fanout& fanout : lane.fanouts) {
    if (fanout.parent < 0 || fanout.parent >= p) {
      return Status::InvalidArgument(where + ": parent " + std::to_string(fanout.parent) +
                                     " is not a member index");
    }
    if (!parents_seen.insert(fanout.parent).second) {
      return Status::InvalidArgument(where + ": " + Who(plan, fanout.parent) + " has two fanouts");
    }
    if (!fanout.streams.empty() && fanout.streams.size() != fanout.children.size()) {
      return Status::InvalidArgument(where + ": fanout of " + Who(plan, fanout.parent) + " lists " +
                                     std::to_string(fanout.streams.size()) + " stream counts for " +
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
        return Status::InvalidArgument(where + ": the source " +
                                       (plan.members[child].empty() ? std::to_string(child) : "'" + plan.members[child] + "'") +
                                       " is given a parent");
      }
      auto [it, first] = parent->emplace(child, fanout.parent);
      if (!first) {
        return Status::InvalidArgument(where + ": " + Who(plan, child) + " has two parents (" +
                                       Who(plan, it->second) + " and " + Who(plan, fanout.parent) + ")");
      }
    }
  }
  return Status::Ok();
}

Status ValidateTree(const Plan& plan, size_t lane_index) {
  std::unordered_map<int, int> parent;
  GRIDCAST_RETURN_IF_ERROR(CheckFanouts(plan, lane_index, &parent));
  const Lane& lane = plan.lanes[lane_index];
  const int p = static_cast<int>(plan.members.size());
  std::vector<std::vector<int>> children(p);
  for (const Fanout& fanout : lane.fanouts) children[fanout.parent] = fanout.children;
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
        return Status::InvalidArgument(LaneName(lane_index) + ": member '" + plan.members[v] +
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

// The rules of swarm entries that hold for any part of the swarm: the source and every index a
// member, no entry for the source, none twice, peers distinct and not the member itself,
// stripes within the payload. Fills `entry_of` with each listed member's entry.
Status CheckSwarmEntries(const Plan& plan, std::unordered_map<int, size_t>* entry_of) {
  const Swarm& swarm = plan.swarm;
  const int p = static_cast<int>(plan.members.size());
  if (swarm.source < 0 || swarm.source >= p) {
    return Status::InvalidArgument("swarm source " + std::to_string(swarm.source) +
                                   " is not a member index");
  }
  if (swarm.source_upload_slots < 0) {
    return Status::InvalidArgument("swarm source has a negative number of upload slots");
  }
  for (size_t i = 0; i < swarm.members.size(); ++i) {
    const SwarmMember& m = swarm.members[i];
    if (m.member < 0 || m.member >= p) {
      return Status::InvalidArgument("swarm entry " + std::to_string(i) + " names member " +
                                     std::to_string(m.member));
    }
    const std::string where = "swarm " + Who(plan, m.member);
    if (m.member == swarm.source) return Status::InvalidArgument(where + " is the source");
    if (!entry_of->emplace(m.member, i).second) return Status::InvalidArgument(where + " is listed twice");
    if (m.upload_slots < 0) return Status::InvalidArgument(where + " has a negative number of upload slots");
    std::unordered_set<int> seen;
    for (int peer : m.peers) {
      if (peer < 0 || peer >= p) {
        return Status::InvalidArgument(where + ": peer " + std::to_string(peer) +
                                       " is not a member index");
      }
      if (peer == m.member) return Status::InvalidArgument(where + " lists itself as a peer");
      if (!seen.insert(peer).second) {
        return Status::InvalidArgument(where + " lists peer " + Who(plan, peer) + " twice");
      }
    }
    for (const ChunkRange& range : m.stripe) {
      GRIDCAST_RETURN_IF_ERROR(ValidateRange(range, plan.NumChunks(), where));
    }
  }
  return Status::Ok();
}

// Every member but the source listed once, and every member reaches the source through peer
// links, so no member is left without a way to get a chunk. Stripes are a schedule, not a
// partition: a chunk in no stripe is still fetched.
Status ValidateSwarm(const Plan& plan) {
  const Swarm& swarm = plan.swarm;
  std::unordered_map<int, size_t> entry_of;
  GRIDCAST_RETURN_IF_ERROR(CheckSwarmEntries(plan, &entry_of));
  const int p = static_cast<int>(plan.members.size());
  for (int v = 0; v < p; ++v) {
    if (v != swarm.source && entry_of.count(v) == 0) {
      return Status::InvalidArgument("member '" + plan.members[v] + "' is not in the swarm");
    }
  }
  std::vector<std::vector<int>> links(p);
  for (const SwarmMember& m : swarm.members) {
    for (int peer : m.peers) {
      links[m.member].push_back(peer);
      links[peer].push_back(m.member);
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

// Every chunk of the payload in exactly one lane (a pull plan has none).
Status ValidateLaneChunks(const Plan& plan) {
  if (!plan.HasLanes()) return Status::Ok();
  const uint64_t n = plan.NumChunks();
  std::vector<int> owner(n, -1);
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
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

// What holds for a whole plan and any part of it before the lanes and the swarm.
Status CheckModeAndLanes(const Plan& plan) {
  GRIDCAST_RETURN_IF_ERROR(!plan.HasSwarm() ? CheckChunkBytes(plan.chunk_bytes)
                                                         : CheckPieceBytes(plan.chunk_bytes));
  if (!plan.HasLanes()) {
    if (!plan.lanes.empty()) return Status::InvalidArgument("a pull plan has no push lanes");
  } else if (plan.lanes.empty()) {
    return Status::InvalidArgument("plan has no lanes");
  }
  if (plan.window_chunks < 0) return Status::InvalidArgument("a plan's window is a count of chunks, not negative");
  if (plan.shared_chunks) {
    // A member learns a chunk's lane from the parent that sends it; a swarm or a second source
    // would hand it chunks no lane of its own logged.
    if (plan.HasSwarm()) return Status::InvalidArgument("a plan whose lanes share chunks is a push plan");
    for (const Lane& lane : plan.lanes) {
      if (lane.source != plan.lanes.front().source) {
        return Status::InvalidArgument("lanes that share chunks have one source");
      }
    }
  }
  return Status::Ok();
}

Status RequireNamed(const Plan& plan, int m, const std::string& as) {
  if (plan.members[m].empty()) {
    return Status::InvalidArgument(as + " (member " + std::to_string(m) + ") is not named in the plan");
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
  GRIDCAST_RETURN_IF_ERROR(CheckChunkCount(plan.payload_bytes, plan.chunk_bytes, plan.HasSwarm()));
  GRIDCAST_RETURN_IF_ERROR(CheckModeAndLanes(plan));
  if (plan.HasSwarm()) GRIDCAST_RETURN_IF_ERROR(ValidateSwarm(plan));
  for (size_t l = 0; l < plan.lanes.size(); ++l) GRIDCAST_RETURN_IF_ERROR(ValidateTree(plan, l));
  return ValidateLaneChunks(plan);
}

Status ValidatePlanPart(const Plan& plan, int member) {
  const int p = static_cast<int>(plan.members.size());
  if (member < 0 || member >= p) {
    return Status::InvalidArgument("member " + std::to_string(member) + " is not in a plan of " +
                                   std::to_string(p) + " members");
  }
  GRIDCAST_RETURN_IF_ERROR(RequireNamed(plan, member, "this member"));
  std::set<std::string> names;
  for (const std::string& name : plan.members) {
    if (!name.empty() && !names.insert(name).second) {
      return Status::InvalidArgument("member '" + name + "' is listed twice");
    }
  }
  GRIDCAST_RETURN_IF_ERROR(CheckModeAndLanes(plan));
  if (plan.HasSwarm()) {
    std::unordered_map<int, size_t> entry_of;
    GRIDCAST_RETURN_IF_ERROR(CheckSwarmEntries(plan, &entry_of));
    GRIDCAST_RETURN_IF_ERROR(RequireNamed(plan, plan.swarm.source, "the swarm's source"));
    if (member != plan.swarm.source) {
      auto entry = entry_of.find(member);
      if (entry == entry_of.end()) return Status::InvalidArgument(Who(plan, member) + " is not in the swarm");
      for (int peer : plan.swarm.members[entry->second].peers) {
        GRIDCAST_RETURN_IF_ERROR(RequireNamed(plan, peer, "a swarm peer"));
      }
    }
  }
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    std::unordered_map<int, int> parent;
    GRIDCAST_RETURN_IF_ERROR(CheckFanouts(plan, l, &parent));
    const Lane& lane = plan.lanes[l];
    GRIDCAST_RETURN_IF_ERROR(RequireNamed(plan, lane.source, LaneName(l) + ": the source"));
    if (member != lane.source) {
      auto up = parent.find(member);
      if (up == parent.end()) {
        return Status::InvalidArgument(LaneName(l) + ": " + Who(plan, member) + " has no parent");
      }
      GRIDCAST_RETURN_IF_ERROR(RequireNamed(plan, up->second, LaneName(l) + ": its parent"));
    }
    for (const Fanout& fanout : lane.fanouts) {
      if (fanout.parent != member) continue;
      for (int child : fanout.children) GRIDCAST_RETURN_IF_ERROR(RequireNamed(plan, child, LaneName(l) + ": a child"));
    }
  }
  return ValidateLaneChunks(plan);
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
