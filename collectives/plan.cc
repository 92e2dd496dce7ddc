#include "collectives/plan.h"
#include "common/units.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace gridcast {

size_t PlanModeIndex(PlanMode mode) {
  return static_cast<size_t>(std::ranges::find(kPlanModeRows, mode, &PlanModeRow::mode) - std::begin(kPlanModeRows));
}

const char* PlanModeName(PlanMode mode) { return IsPlanMode(mode) ? PlanModeRowOf(mode).name : "unknown"; }

std::optional<PlanMode> PlanModeFromName(std::string_view name) {
  for (const PlanModeRow& row : kPlanModeRows) {
    if (name == row.name) return row.mode;
  }
  return std::nullopt;
}

uint64_t Lane::ChunkCount() const {
  uint64_t count = 0;
  for (const ChunkRange& range : chunks) count += range.Count();
  return count;
}

uint64_t Lane::FirstChunk() const {
  uint64_t first = 0;
  bool any = false;
  for (const ChunkRange& range : chunks) {
    if (range.Count() == 0) continue;
    first = any ? std::min(first, range.begin) : range.begin;
    any = true;
  }
  return first;
}

uint64_t Lane::LastChunk() const {
  uint64_t last = 0;
  for (const ChunkRange& range : chunks) {
    if (range.Count() > 0) last = std::max(last, range.Last());
  }
  return last;
}

bool Lane::Carries(uint64_t chunk) const {
  return std::any_of(chunks.begin(), chunks.end(),
                     [chunk](const ChunkRange& r) { return r.Contains(chunk); });
}

int Lane::ParentOf(int member) const {
  for (const Fanout& fanout : fanouts) {
    if (std::find(fanout.children.begin(), fanout.children.end(), member) != fanout.children.end()) {
      return fanout.parent;
    }
  }
  return -1;
}

int Lane::StreamsOn(const Fanout& fanout, size_t child_position) const {
  if (child_position < fanout.streams.size()) return fanout.streams[child_position];
  return streams;
}

uint64_t Plan::NumChunks() const {
  return CeilDiv(payload_bytes, chunk_bytes);
}

uint64_t Plan::ChunkSize(uint64_t chunk) const {
  const uint64_t offset = ChunkOffset(chunk);
  return offset >= payload_bytes ? 0 : std::min(chunk_bytes, payload_bytes - offset);
}

uint64_t Plan::LaneBytes(int lane) const {
  const Lane& l = lanes[lane];
  const uint64_t n = NumChunks();
  uint64_t bytes = 0;
  for (const ChunkRange& range : l.chunks) {
    const uint64_t count = range.Count();
    if (count == 0) continue;
    // Every chunk is full except possibly the last one of the payload.
    bytes += count * chunk_bytes;
    if (range.Last() == n - 1) bytes -= chunk_bytes - ChunkSize(n - 1);
  }
  return bytes;
}

std::vector<int> Swarm::GroupOfEachMember() const {
  std::map<int, int> entry_of;  // member index -> entry
  for (size_t i = 0; i < members.size(); ++i) entry_of[members[i].member] = static_cast<int>(i);
  std::vector<int> root(members.size());
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](int e) {
    while (root[e] != e) e = root[e] = root[root[e]];
    return e;
  };
  auto limits = [](const SwarmMember& m, int peer) {
    return std::any_of(m.takes_only.begin(), m.takes_only.end(), [peer](const PeerChunks& p) { return p.peer == peer; });
  };
  for (size_t i = 0; i < members.size(); ++i) {
    for (int peer : members[i].peers) {
      auto it = entry_of.find(peer);
      if (peer == source || it == entry_of.end()) continue;
      if (limits(members[i], peer) || limits(members[it->second], members[i].member)) continue;
      root[find(static_cast<int>(i))] = find(it->second);
    }
  }
  std::map<int, int> number;  // root -> group
  std::vector<int> group(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    group[i] = number.emplace(find(static_cast<int>(i)), static_cast<int>(number.size())).first->second;
  }
  return group;
}

}  // namespace gridcast
