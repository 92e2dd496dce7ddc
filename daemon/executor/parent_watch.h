// ParentWatch: whether each lane this member receives still arrives, in push and hybrid plans
// alike. A child holds the evidence (bytes and keepalives from one parent, and whether it
// itself holds that parent up); only the source, which knows the whole plan, can re-feed a
// lane (docs/repair.md). So the watch only judges, and the verdicts travel up in the member's
// status (PlanStatus.lane_trouble):
//   gone    no connection of the lane's parent is open, and none was for `gone_after` (a live
//           parent re-dials a lost connection every reconnect delay, 200 ms: three tries), or
//           a dial of the parent's data address was refused since (Refused: no daemon listens
//           there, as after a crash; a host that went away answers nothing, and waits);
//   silent  a connection is open, but no byte and no keepalive came for `silent_after`, while
//           this member owed the parent nothing (no chunk of it being verified, no reply
//           unwritten: a child that holds its parent up is not kept waiting by it).
//   slow    over the last `slow_after`, the lane brought less than kSlowFraction of the usual
//           pace of this member's lanes (their upper median, each in proportion to its share
//           of the payload: in a healthy plan the lanes run side by side), or over the last
//           `very_slow_after` less than kVerySlowFraction of theirs over it; this member
//           owed its parent nothing, and the lane was not about to end. Bytes are the
//           kernel's (Arrived) where the transport tells them, else the chunks' (Received). A
//           member whose own download is slow sees all its lanes slow alike and says nothing;
//           one lane alone cannot be judged. A parent may
//           be slow only because a member above it is (it then waits, sending keepalives, and
//           reports that member itself): the source, which sees both reports, decides.
// A parent waiting for chunks itself sends keepalives (KeepaliveInterval), so only the member
// below a failure reports it, not the whole subtree. No verdict before `grace` after Start
// (connections open level by level as Start travels down the tree) or after a lane's parent
// changed, unless the parent connected meanwhile; none on a lane this member holds whole.
// Every second a lane waits costs its whole subtree that second at the end (its parents'
// uploads are all in use), so the times are as short as the evidence allows. Times are passed
// in, so the rules are tested without sockets or sleeps. io thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "collectives/plan_patch.h"

namespace gridcast {

struct LaneTrouble {
  int lane = 0;
  int parent = 0;  // its parent in the lane, a plan member index
  RepairReason reason = RepairReason::kGone;
  double since_s = 0;  // how long it has lasted
  double measured_bps = 0;  // kSlow: what the lane brought over the window, bit/s
  double expected_bps = 0;  // ... and what it would have at the other lanes' pace
  bool fresh = false;  // first judged so (or judged otherwise before) in this Judge
};

struct ParentWatchTimes {
  std::chrono::milliseconds silent_after{1000};
  std::chrono::milliseconds gone_after{600};
  std::chrono::milliseconds grace{2000};
  std::chrono::milliseconds slow_after{3000};
  std::chrono::milliseconds very_slow_after{350};
};

// Below this fraction of the other lanes' pace a lane is slow: a parent shaped to a tenth of
// its NIC brings its lane in at a tenth or less, while lanes of a healthy plan that share a
// child's download stay within a factor of two or three of each other over seconds.
inline constexpr double kSlowFraction = 0.3;
// ... and below this fraction over `very_slow_after`, 0.35 s by default: every second a
// straggler keeps its children costs them about that second at the end (its lane falls behind
// the others, and no member below it has upload to spare to catch up; flat16 at 50mbit, a
// member at a tenth found at 1.3 s: the others 1.3 s after a healthy run), and a parent shaped
// to a tenth brings a tenth of the other lanes' pace or less from its children's first
// connection on. A TCP retransmission timeout (200 ms at least, plus a queue's 50 ms on the
// netgrid) leaves more than this: a lane must stall 0.3 s of the 0.35 to be called slow.
inline constexpr double kVerySlowFraction = 0.15;
// A lane's bytes come a chunk at a time from a parent that forwards each once it holds it:
// over a window of fewer than a few chunks at the usual pace, the gap between two chunks of a
// healthy lane looks like a stall (a sanitized bench_e2e run: lanes of 1.3 mbit/s in 64 KiB
// chunks, 0.4 s a chunk, one judged very slow). No verdict from a window in which the usual
// pace would bring fewer chunks than this.
inline constexpr double kChunksPerJudgedWindow = 4;

class ParentWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // What Judge needs to know of a lane now, beyond the events.
  struct LaneNow {
    bool held = false;  // this member holds every chunk of the lane
    bool owes = false;  // it holds the parent up: a chunk of it being verified, or a reply unwritten
    uint64_t remaining_bytes = 0;  // of the lane, not yet held here
  };

  // `parents`: this member's parent in each lane, -1 where it is the lane's source;
  // `lane_bytes`: each lane's share of the payload (Plan::LaneBytes), what its pace is
  // measured against; `chunk_bytes`: the plan's chunk (kChunksPerJudgedWindow; 0: none).
  ParentWatch(std::vector<int> parents, std::vector<uint64_t> lane_bytes, ParentWatchTimes times,
              uint64_t chunk_bytes = 0);

  void Start(Clock::time_point now);
  // `lane` has a new parent from `now` on (a plan patch): no verdict on it during the grace,
  // and none carried over from the old parent.
  void Reattached(int lane, int parent, Clock::time_point now);
  // A connection of `lane`'s parent was adopted, or ended.
  void Opened(int lane, Clock::time_point now);
  void Closed(int lane, Clock::time_point now);
  // Whether to find out now if `lane`'s parent still runs (DataTransport::Refuses): the lane
  // had a connection from it, has none now, has no verdict yet and is not held whole here (a
  // parent closes its connections once it sent the lane, at the tail of every broadcast; a
  // live parent accepts the dial, which costs it a connection closed at once); or, once, the
  // parent has not connected within `gone_after` of Start or of becoming the lane's parent (a
  // plan patch: a live one dials at once; one that died before anyone knew would leave the lane
  // to the grace).
  bool ShouldProbe(int lane, const LaneNow& now_lane, Clock::time_point now);
  // Dialling `parent`'s data address was refused (nothing listens there: its daemon does not
  // run): `lane` is gone at the next Judge, unless its parent changed or connected meanwhile.
  void Refused(int lane, int parent);
  // Bytes or a keepalive arrived on `lane` at `now` (an earlier time than one given before
  // changes nothing).
  void Progress(int lane, Clock::time_point now);
  // ... of which a chunk's `bytes`.
  void Received(int lane, uint64_t bytes) { lanes_[lane].bytes += bytes; }
  // ... or what the kernel received on the lane's connections since the last call (TCP_INFO):
  // from the first call on, the lane's pace counts these instead, which a slow lane's chunks,
  // a part at a time, would show only in steps.
  void Arrived(int lane, uint64_t bytes);

  // Every lane's trouble at `now` (REQUIRES: lanes.size() == the number of lanes).
  std::vector<LaneTrouble> Judge(Clock::time_point now, const std::vector<LaneNow>& lanes);
  // The last verdict on `lane`: its trouble, if Judge found one.
  std::optional<RepairReason> Trouble(int lane) const { return lanes_[lane].verdict; }
  // How long `lane` has had no bytes, no keepalive and no connection opened (zero before
  // Start, during the grace before its parent connected, and for a lane this member is the
  // source of).
  Clock::duration QuietFor(int lane, Clock::time_point now) const;

 private:
  struct Sample {
    Clock::time_point at;
    uint64_t bytes = 0;
  };
  struct Lane {
    int parent = -1;
    uint64_t lane_bytes = 0;
    uint64_t bytes = 0;                 // received in chunks, ever
    std::optional<uint64_t> kernel_bytes;  // received by the kernel, ever, once Arrived was called
    uint64_t Counted() const { return kernel_bytes.value_or(bytes); }
    std::deque<Sample> samples;         // one per Judge while connected, the oldest just past slow_after
    int open = 0;
    bool refused = false;               // Refused since the last connection closed
    bool unconnected_probed = false;    // ShouldProbe said so before the parent ever connected
    Clock::time_point last_progress{};  // bytes, a keepalive, a connection opened, or this member owing
    Clock::time_point last_closed{};    // when `open` last went to 0 (Start, before any)
    Clock::time_point grace_until{};    // no verdict before (Start, or a new parent, + grace)...
    bool connected = false;             // ... unless the parent connected since
    std::optional<RepairReason> verdict;
  };

  // Judges slow the lanes without a verdict yet whose pace over `window` is below `fraction`
  // of the usual pace over it, filling in their entries of the vectors (by lane).
  void JudgeSlow(Clock::time_point now, const std::vector<LaneNow>& lanes, Clock::duration window, double fraction,
                 std::vector<std::optional<RepairReason>>& verdicts, std::vector<Clock::time_point>& since,
                 std::vector<double>& measured_bps, std::vector<double>& expected_bps) const;

  const ParentWatchTimes times_;
  const uint64_t chunk_bytes_;
  std::vector<Lane> lanes_;
  bool started_ = false;
};

}  // namespace gridcast
