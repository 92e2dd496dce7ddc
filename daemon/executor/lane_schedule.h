// LaneSchedule: what this member passes on in each lane of a plan, in which order, to whom,
// and who holds what. The bookkeeping the lane senders and the chunk intake share; no I/O but
// its bitmaps' pages, no clock, no thread (the execution keeps it on its io thread).
//
// Each lane has a log: the chunks this member passes on in it, in the order it does. A plan of
// fixed lanes has every lane's log at the start, computed from the lane's ranges rather than
// listed (ChunkSequence: a plan may have 2^30 chunks). Where lanes share chunks
// (Plan::shared_chunks) the source logs a chunk in the lane that claims it (ClaimNext), every
// other member as the chunk arrives (or is assigned to it), and a lane's log is final once
// every chunk is logged somewhere; those logs are lists (kMaxSharedLaneChunks bounds them).
//
// Its bits per chunk and edge are ChunkBits, past a size mapped from a file of `spill_dir`.
//
// Both sides of an edge ask it: the parent what it says of itself in the handshake (HelloAs
// Parent), which chunks a stream carries and when a chunk has reached every child (Delivered);
// the child whether that parent and its frames belong to the plan (CheckParent, Carries). It is
// the authority on the tree here: the plan's, then as plan patches move edges (ApplyMove).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectives/chunk_sequence.h"
#include "common/chunk_bits.h"
#include "collectives/plan.h"
#include "collectives/plan_patch.h"
#include "daemon/transport/frame.h"
#include "include/gridcast/result.h"

namespace gridcast {

class LaneSchedule {
 public:
  // An edge from this member: the child, and the parallel streams on it.
  struct Edge {
    int child = 0;
    int streams = 1;
    bool operator==(const Edge&) const = default;
  };

  // Where one open connection to a child is in its lane's log.
  struct Cursor {
    uint64_t next_position = 0;  // the log position it hands over next
    int stream_count = 1;        // it takes every stream_count-th position
    int child = 0;               // the edge it is on: this member's child, and its stream
    int stream = 0;
  };

  // REQUIRES: ValidatePlan(plan).ok(); 0 <= self < plan.members.size().
  LaneSchedule(const Plan& plan, int self, std::string spill_dir = {});

  int self() const { return self_; }
  size_t lanes() const { return parent_.size(); }
  // This member's parent in `lane`; -1 at the source.
  int ParentOf(int lane) const { return parent_[lane]; }
  // This member's children in `lane`.
  const std::vector<Edge>& ChildrenOf(int lane) const { return children_[lane]; }
  // One move of a plan patch (collectives/plan_patch.h): the tree as this member knows it
  // changes where the move names it. As the child it takes the new parent (and its stream
  // count) in the lane; as the old parent it forgets the child (and what it delivered there,
  // so a chunk counts as forwarded without it); as the new parent it gains the child, which
  // holds nothing from here yet. Moves that do not name this member change nothing.
  void ApplyMove(const EdgeMove& move);
  // Whether this member receives any lane from a parent.
  bool ReceivesAnyLane() const;

  // The parent side of a handshake: who this member is on stream `stream` of `stream_count` of
  // `lane` of plan `id` (HandshakeAsParent adds the nonce and MAC).
  Hello HelloAsParent(const PlanId& id, int lane, int stream, int stream_count) const;
  // The child side of a handshake: OK when `hello.parent` is this member's parent in
  // `hello.lane` and the stream count is the plan's on that edge.
  Status CheckParent(const Hello& hello) const;

  // How many chunks `lane` has logged, and the one at `position` (< LogSize(lane)).
  uint64_t LogSize(int lane) const;
  uint64_t LoggedAt(int lane, uint64_t position) const;
  // The lane `chunk` is logged in; -1 when none yet (or chunk >= NumChunks()).
  int LoggedIn(uint64_t chunk) const;
  bool EveryChunkLogged() const { return logged_count_ == plan_.NumChunks(); }
  // Logs `chunk` in `lane` (its children in that lane wait for it). False when it was logged
  // already (in any lane).
  bool AddToLog(int lane, uint64_t chunk);
  // How many of `lane`'s first logged chunks this member holds, as `holds` says of each: a
  // cursor that only moves forward (verified chunks stay verified), so asking often is cheap.
  uint64_t HeldPrefix(int lane, const std::function<bool(uint64_t)>& holds);
  // This member holds every chunk `lane` carries (shared lanes: once every chunk is logged).
  bool HoldsWholeLane(int lane, const std::function<bool(uint64_t)>& holds);
  // Whether a frame of `chunk` may come on `stream` of `stream_count` of `lane`: fixed lanes
  // carry each logged chunk on one stream; shared lanes any chunk not logged in another lane.
  bool Carries(int lane, uint64_t chunk, int stream, int stream_count) const;

  // Open connections to this member's children in `lane`, listed while open: a lane's source
  // claims chunks at their pace and a member holds acknowledgements while one of them lags.
  void AddCursor(int lane, const Cursor* cursor);
  void RemoveCursor(int lane, const Cursor* cursor);
  // At the source of shared lanes: logs the next chunk no lane has claimed in `lane` once
  // every open connection of the lane was handed all the lane logged, so a lane takes chunks
  // as fast as its slowest edge from here drains them. False when it may not (yet).
  bool ClaimNext(int lane);
  // Shared lanes: more than kLaneSlackChunks chunks of `lane` wait here for one connection's
  // window, or more than `unopened_slack` while an edge of the lane from here was never open
  // yet. The member then holds its acknowledgements back, so a slow edge slows its lane all the
  // way up to the source, which gives the lane fewer chunks (and a lane that cannot pass chunks
  // on yet takes no more than that slack; a window of it lets the edges open meanwhile).
  bool Lags(int lane, uint64_t unopened_slack) const;

  // `child` holds `chunk` of `lane` (acknowledged, or in its bitmap). True when this made the
  // chunk held by every child of this member in the lane it is logged in.
  bool Delivered(int lane, int child, uint64_t chunk);
  // Every child this member sends `chunk` to holds it (or it is logged nowhere yet).
  bool ForwardedToAll(uint64_t chunk) const;

 private:
  // Shared lanes: chunks that may wait at a member for one connection's window before the
  // member holds its acknowledgements back (one arriving while the window drains is no lag).
  static constexpr uint64_t kLaneSlackChunks = 1;

  // Where a chunk's delivered bit is in its lane's edges: its log position in a fixed lane
  // (a lane's edges need bits for its own chunks only), the chunk itself in shared lanes.
  uint64_t DeliveredSlot(int lane, uint64_t chunk) const;

  const Plan& plan_;
  const int self_;
  const std::string spill_dir_;
  std::vector<int> parent_;
  std::vector<int> parent_streams_;            // per lane, the streams on the edge from the parent
  std::vector<std::vector<Edge>> children_;  // per lane, this member's children in it
  // Fixed lanes: each lane's log and the lane of each chunk, from the ranges.
  std::vector<ChunkSequence> sequence_;
  std::optional<ChunkOwners> owners_;
  // Shared lanes: each lane's log as claimed, and per chunk the lane it is logged in (-1: none
  // yet; a plan has at most kMaxPlanLanes, 4,096).
  std::vector<std::vector<uint64_t>> appended_;
  std::vector<int16_t> logged_in_;
  uint64_t logged_count_ = 0;
  uint64_t next_unclaimed_ = 0;  // at the source of shared lanes
  // Per (lane, child) edge, the chunks the child holds, by DeliveredSlot; a chunk is forwarded
  // to all once every child of the lane it is logged in holds it (one bit per chunk and edge,
  // no count per chunk).
  std::map<std::pair<int, int>, ChunkBits> delivered_;
  std::vector<std::vector<const Cursor*>> cursors_;
  std::vector<uint64_t> held_prefix_;  // HeldPrefix's cursor per lane
  // Per lane, the connections (child, stream) it has from here, and those opened so far.
  std::vector<size_t> edge_streams_;
  std::vector<std::set<std::pair<int, int>>> opened_;
};

}  // namespace gridcast
