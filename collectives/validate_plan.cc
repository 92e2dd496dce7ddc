#include "collectives/validate_plan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <tuple>
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
  if (!(lane.planned_bps >= 0 && lane.planned_bps <= kMaxPlannedBps)) {
    return Status::InvalidArgument(where + ": planned rate must be from 0 to 1e15 bit/s");
  }
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
    if (!(m.source_share_bps >= 0) || std::isinf(m.source_share_bps)) {
      return Status::InvalidArgument(where + " has a source share that is not a rate");
    }
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
    std::unordered_set<int> limited;
    for (const PeerChunks& limit : m.takes_only) {
      if (seen.count(limit.peer) == 0) {
        return Status::InvalidArgument(where + " limits what it takes from " + std::to_string(limit.peer) +
                                       ", which is not one of its peers");
      }
      if (!limited.insert(limit.peer).second) {
        return Status::InvalidArgument(where + " limits what it takes from " + Who(plan, limit.peer) + " twice");
      }
      if (limit.peer == swarm.source) {
        return Status::InvalidArgument(where + " limits what it takes from the source");
      }
      for (const ChunkRange& range : limit.chunks) {
        GRIDCAST_RETURN_IF_ERROR(ValidateRange(range, plan.NumChunks(), where));
      }
    }
    for (const ChunkRange& range : m.stripe) {
      GRIDCAST_RETURN_IF_ERROR(ValidateRange(range, plan.NumChunks(), where));
    }
  }
  return Status::Ok();
}

// Every member but the source listed once, and every member reaches the source through peer
// links it takes pieces over, so no member is left without a way to get a chunk. Stripes are
// a schedule, not a partition: a chunk in no stripe is still fetched.
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
  auto takes_nothing_from = [&](int member, int peer) {
    auto entry = entry_of.find(member);
    if (entry == entry_of.end()) return false;  // the source: no limits (it takes nothing anyway)
    const std::vector<PeerChunks>& limits = swarm.members[entry->second].takes_only;
    return std::any_of(limits.begin(), limits.end(), [&](const PeerChunks& limit) {
      return limit.peer == peer &&
             std::all_of(limit.chunks.begin(), limit.chunks.end(), [](const ChunkRange& r) { return r.Count() == 0; });
    });
  };
  // A limit is stated at both ends: each end keeps the other's bitfield from its libtorrent,
  // so each announces its pieces to the other again (daemon/pull/member_plugins.cc).
  for (const SwarmMember& m : swarm.members) {
    for (const PeerChunks& limit : m.takes_only) {
      const std::vector<PeerChunks>& back = swarm.members[entry_of.at(limit.peer)].takes_only;
      if (std::none_of(back.begin(), back.end(), [&](const PeerChunks& l) { return l.peer == m.member; })) {
        return Status::InvalidArgument("swarm " + Who(plan, m.member) + " limits what it takes from " +
                                       Who(plan, limit.peer) + ", which does not limit it back");
      }
    }
  }
  std::vector<std::vector<int>> links(p);  // links[v]: the members that may take pieces from v
  for (const SwarmMember& m : swarm.members) {
    for (int peer : m.peers) {
      if (!takes_nothing_from(m.member, peer)) links[peer].push_back(m.member);
      if (!takes_nothing_from(peer, m.member)) links[m.member].push_back(peer);
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

struct LaneRange {
  uint64_t begin = 0;
  uint64_t last = 0;
  uint64_t step = 1;  // 1 for a range of one chunk
  size_t lane = 0;
};

// The smallest chunk in both ranges, if any: x = a.begin (mod a.step) and x = b.begin
// (mod b.step) at or past both begins and up to both lasts (the Chinese remainder theorem).
// REQUIRES: begins, lasts and steps below 2^31 (a plan has at most 2^30 chunks), so that no
// product below overflows.
std::optional<uint64_t> FirstCommonChunk(const LaneRange& a, const LaneRange& b) {
  const int64_t lo = static_cast<int64_t>(std::max(a.begin, b.begin));
  const int64_t hi = static_cast<int64_t>(std::min(a.last, b.last));
  if (lo > hi) return std::nullopt;
  // Solve a.begin + i * a.step = b.begin (mod b.step) for i, with old_s * a.step = g (mod b.step).
  int64_t old_r = static_cast<int64_t>(a.step), r = static_cast<int64_t>(b.step), old_s = 1, s = 0;
  while (r != 0) {
    const int64_t q = old_r / r;
    old_r -= q * r;
    std::swap(old_r, r);
    old_s -= q * s;
    std::swap(old_s, s);
  }
  const int64_t g = old_r;
  const int64_t diff = static_cast<int64_t>(b.begin) - static_cast<int64_t>(a.begin);
  if (diff % g != 0) return std::nullopt;
  const int64_t modulus = static_cast<int64_t>(b.step) / g;  // i is unique modulo this
  int64_t i = (diff / g) % modulus * (old_s % modulus) % modulus;
  if (i < 0) i += modulus;
  const int64_t lcm = static_cast<int64_t>(a.step) * modulus;
  int64_t x = static_cast<int64_t>(a.begin) + i * static_cast<int64_t>(a.step);  // a common chunk
  if (x < lo) x += (lo - x + lcm - 1) / lcm * lcm;
  else x -= (x - lo) / lcm * lcm;
  if (x > hi) return std::nullopt;
  return static_cast<uint64_t>(x);
}

// Pairs of ranges of different steps checked one by one: planners use one step per plan, so
// this bounds only what a plan written by hand may mix.
constexpr uint64_t kMaxMixedStepPairs = uint64_t{1} << 22;

// Every chunk of the payload in exactly one lane (a pull plan has none). Computed from the
// ranges, not chunk by chunk: a plan may have 2^30 chunks.
Status ValidateLaneChunks(const Plan& plan) {
  if (!plan.HasLanes()) return Status::Ok();
  const uint64_t n = plan.NumChunks();
  if (n > kMaxPlanChunks) {
    return Status::InvalidArgument("plan has " + std::to_string(n) + " chunks; the limit is " + std::to_string(kMaxPlanChunks));
  }
  std::vector<LaneRange> ranges;
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    for (const ChunkRange& range : plan.lanes[l].chunks) {
      GRIDCAST_RETURN_IF_ERROR(ValidateRange(range, n, LaneName(l)));
      if (range.Count() == 0) continue;
      ranges.push_back({range.begin, range.Last(), range.Count() == 1 ? 1 : range.step, l});
    }
  }
  const auto both = [](uint64_t chunk, const LaneRange& a, const LaneRange& b) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is in lane " + std::to_string(std::min(a.lane, b.lane)) +
                                   " and lane " + std::to_string(std::max(a.lane, b.lane)));
  };
  // Ranges of one step and remainder overlap only where one begins before the other's last.
  std::sort(ranges.begin(), ranges.end(), [](const LaneRange& a, const LaneRange& b) {
    return std::make_tuple(a.step, a.begin % a.step, a.begin) < std::make_tuple(b.step, b.begin % b.step, b.begin);
  });
  for (size_t i = 1; i < ranges.size(); ++i) {
    const LaneRange &prev = ranges[i - 1], &next = ranges[i];
    if (prev.step == next.step && prev.begin % prev.step == next.begin % next.step && next.begin <= prev.last) {
      return both(next.begin, prev, next);
    }
  }
  // Ranges of different steps, pair by pair (sorted by step, each range against those of
  // larger steps).
  uint64_t pairs = 0;
  std::vector<size_t> next_step(ranges.size(), ranges.size());  // the first range of a larger step
  for (size_t i = ranges.size(); i-- > 1;) {
    next_step[i - 1] = ranges[i - 1].step == ranges[i].step ? next_step[i] : i;
  }
  for (size_t i = 0; i < ranges.size(); ++i) pairs += ranges.size() - next_step[i];
  if (pairs > kMaxMixedStepPairs) {
    return Status::InvalidArgument("plan mixes chunk ranges of different steps in " + std::to_string(pairs) +
                                   " pairs; the limit is " + std::to_string(kMaxMixedStepPairs));
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (size_t j = next_step[i]; j < ranges.size(); ++j) {
      if (auto common = FirstCommonChunk(ranges[i], ranges[j])) return both(*common, ranges[i], ranges[j]);
    }
  }
  // No chunk twice: every chunk once exactly when [0, x] holds x + 1 of them for x = n - 1.
  const auto covered_through = [&](uint64_t x) {
    uint64_t count = 0;
    for (const LaneRange& r : ranges) {
      if (r.begin <= x) count += (std::min(x, r.last) - r.begin) / r.step + 1;
    }
    return count;
  };
  if (n == 0 || covered_through(n - 1) == n) return Status::Ok();
  uint64_t lo = 0, hi = n - 1;  // the first chunk in no lane is in [lo, hi]
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (covered_through(mid) < mid + 1) hi = mid;
    else lo = mid + 1;
  }
  return Status::InvalidArgument("chunk " + std::to_string(lo) + " is in no lane");
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
    if (plan.NumChunks() > kMaxSharedLaneChunks) {
      return Status::InvalidArgument("a plan whose lanes share chunks has at most " + std::to_string(kMaxSharedLaneChunks) +
                                     " chunks, not " + std::to_string(plan.NumChunks()));
    }
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
