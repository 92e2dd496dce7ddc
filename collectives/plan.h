// Plan: one broadcast strategy as plain data (the C++ mirror of proto/plan.proto).
//
// Members are named and indexed; a lane carries a set of chunks down a spanning arborescence
// rooted at its source, and each parent sends to its children in the order listed. The lane's
// source holds the lane's chunks at the start (for a broadcast every lane has the same source;
// all-to-all multicast roots lanes at many sources). Plain value type; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_rows.h"

namespace gridcast {

// Chunks begin, begin + step, begin + 2*step, ... below end.
struct ChunkRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t step = 1;

  uint64_t Count() const { return end > begin ? (end - begin + step - 1) / step : 0; }
  bool Contains(uint64_t chunk) const {
    return chunk >= begin && chunk < end && (chunk - begin) % step == 0;
  }
  uint64_t Last() const { return begin + (Count() - 1) * step; }  // REQUIRES: Count() > 0
  bool operator==(const ChunkRange&) const = default;
};

// A parent and its children in send order.
struct Fanout {
  int parent = 0;                 // member index
  std::vector<int> children;      // member indices, send order
  std::vector<int> streams;       // parallel TCP streams per child; empty = lane default
  bool operator==(const Fanout&) const = default;
};

struct Lane {
  int source = 0;                       // member index of the tree's root
  std::vector<ChunkRange> chunks;       // the chunks this lane carries
  std::vector<Fanout> fanouts;          // the arborescence, one entry per parent
  int streams = 1;                      // default parallel streams per edge
  // Payload bit/s each edge carries in the plan, where the network is described (SetPlanned-
  // LaneRates); 0: not known. Data: the executor paces the lane's source by it.
  double planned_bps = 0;

  uint64_t ChunkCount() const;
  // The lowest and the highest chunk it carries; 0 when it carries none.
  uint64_t FirstChunk() const;
  uint64_t LastChunk() const;
  bool Carries(uint64_t chunk) const;
  // Parent of `member` in this lane, or -1 (the source, or not in the tree).
  int ParentOf(int member) const;
  // Streams on the edge parent -> child (fanout's entry or the lane default).
  int StreamsOn(const Fanout& fanout, size_t child_position) const;
  bool operator==(const Lane&) const = default;
};

// Values are stored on the wire (proto/plan.proto PlanMode); do not renumber.
enum class PlanMode : int { kPush = 1, kPull = 2, kHybrid = 3 };

// What each mode is made of, one row per mode (checked below); the daemon's counters keep
// one entry per row, in this order.
struct PlanModeRow {
  PlanMode mode;
  const char* name;  // as `gridcast send --mode` names it
  bool lanes;        // push trees
  bool swarm;        // a BitTorrent swarm over the members
};
inline constexpr PlanModeRow kPlanModeRows[] = {
    {PlanMode::kPush, "push", /*lanes=*/true, /*swarm=*/false},
    {PlanMode::kPull, "pull", /*lanes=*/false, /*swarm=*/true},
    {PlanMode::kHybrid, "hybrid", /*lanes=*/true, /*swarm=*/true},
};
inline constexpr size_t kPlanModes = std::size(kPlanModeRows);

// Lists the modes for the check below (common/enum_rows.h).
constexpr bool IsPlanMode(PlanMode mode) {
  switch (mode) {
    case PlanMode::kPush:
    case PlanMode::kPull:
    case PlanMode::kHybrid:
      return true;
  }
  return false;
}
static_assert(OneRowPerEnumerator<&PlanModeRow::mode>(kPlanModeRows, IsPlanMode));

// The position of `mode` in kPlanModeRows, and its row there. REQUIRES: IsPlanMode(mode).
size_t PlanModeIndex(PlanMode mode);
inline const PlanModeRow& PlanModeRowOf(PlanMode mode) { return kPlanModeRows[PlanModeIndex(mode)]; }
// "push", "pull" or "hybrid", as `gridcast send --mode` names them; "unknown" for a value no
// mode has.
const char* PlanModeName(PlanMode mode);
// The mode PlanModeName calls `name`; none for another name.
std::optional<PlanMode> PlanModeFromName(std::string_view name);
// Whether a plan of `mode` has push lanes (kPush, kHybrid), a swarm (kPull, kHybrid).
inline bool ModeHasLanes(PlanMode mode) { return PlanModeRowOf(mode).lanes; }
inline bool ModeHasSwarm(PlanMode mode) { return PlanModeRowOf(mode).swarm; }

// A peer and the chunks taken from it.
struct PeerChunks {
  int peer = 0;                    // member index
  std::vector<ChunkRange> chunks;  // empty: none
  bool operator==(const PeerChunks&) const = default;
};

// Pull side of a plan (modes kPull and kHybrid): a BitTorrent swarm over the members. The
// source seeds; each other member first takes its stripe from the source and the rest from its
// peers, so the source sends about one copy per group of peers instead of one per member.
struct SwarmMember {
  int member = 0;                  // member index
  std::vector<ChunkRange> stripe;  // chunks this member fetches from the source
  std::vector<int> peers;          // members it exchanges chunks with (connections are two-way)
  int upload_slots = 0;            // peers it uploads to at once (BitTorrent's unchoke slots); 0: all
  // What of the source's upload the plan gives this member's stripe, bits per second; 0: no
  // limit. The source deals a bandwidth group at most the sum of its members' shares, so a
  // group with upload to spare cannot crowd out one whose bottleneck sets the bound (TCP at
  // the source's NIC favours the flows that do not also queue behind a slow uplink).
  double source_share_bps = 0;
  // Peers (a subset of `peers`, never the source) it takes only some chunks from, perhaps none:
  // it ignores what else they announce. Stated at both ends of a link. A group whose uplink
  // sets the bound takes nothing from other groups (nothing enters it twice), and a group that
  // imports part of its copy from it takes only that part from it (the rest from the source,
  // which the plan paces; docs/daemon.md, `swarm`).
  std::vector<PeerChunks> takes_only;
};

struct Swarm {
  int source = 0;                    // member index of the seed
  std::vector<SwarmMember> members;  // every member but the source, once
  int source_upload_slots = 0;       // as SwarmMember::upload_slots, for the source
  // Measurement broadcasts (tomography): no stripes, every member peers with every other and
  // picks chunks freely, so who-sent-what reflects bandwidth rather than our schedule.
  bool free_choice = false;

  // For each entry of `members`, its group: the entries it reaches through peers other than
  // the source, both ways (links either end limits in takes_only do not count), numbered from
  // 0 in order of their first entry. In a large group members peer
  // with a few others only and pieces travel on in several hops; the group, not the peers, is
  // who shares a set of stripes and may take a departed member's stripe over.
  std::vector<int> GroupOfEachMember() const;
};

struct Plan {
  std::string algorithm;                // the planner that made it
  std::string rationale;                // why (auto records its comparison here)
  PlanMode mode = PlanMode::kPush;
  uint64_t payload_bytes = 0;
  uint64_t chunk_bytes = 1 << 20;       // every chunk but the last has this size
  std::vector<std::string> members;     // node names; member i is index i everywhere
  std::vector<Lane> lanes;               // push trees; none in kPull
  Swarm swarm;                          // kPull and kHybrid only
  // The source hands each chunk to whichever lane drains first instead of the lane that lists
  // it, and a lane's members pass a chunk on in the order it reached them: a lane whose edges
  // run slower than planned carries less, so the lanes end together where a fixed partition
  // leaves the slow lane's chunks last. Each lane's `chunks` is then its expected share (what
  // the simulator and the renderer show). Push plans of one source only.
  bool shared_chunks = false;
  // At most this many unacknowledged chunks per connection where fewer keep the lanes' rates
  // (with shared chunks, each chunk a hop holds beyond that is one committed to a lane before
  // the lane shows how fast it drains); 0: the daemon's window. Members take the smaller.
  int window_chunks = 0;
  // The patches applied to it so far (plan_patch.h PlanPatch::version of the last; 0: none).
  int patch_version = 0;

  // What the plan holds, which is what behaviour keys on: push lanes (kPush, kHybrid), a
  // BitTorrent swarm (kPull, kHybrid).
  bool HasLanes() const { return ModeHasLanes(mode); }
  bool HasSwarm() const { return ModeHasSwarm(mode); }

  uint64_t NumChunks() const;
  uint64_t ChunkSize(uint64_t chunk) const;
  uint64_t ChunkOffset(uint64_t chunk) const { return chunk * chunk_bytes; }
  // Bytes carried by lane `lane` (sum of its chunk sizes). REQUIRES: ValidatePlan(*this).ok().
  uint64_t LaneBytes(int lane) const;
};

}  // namespace gridcast
