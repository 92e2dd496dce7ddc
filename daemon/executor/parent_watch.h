// ParentWatch: whether each lane this member receives still arrives, in push and hybrid plans
// alike. A child holds the evidence (bytes and keepalives from one parent, and whether it
// itself holds that parent up); only the source, which knows the whole plan, can re-feed a
// lane (docs/repair.md). So the watch only judges, and the verdicts travel up in the member's
// status (PlanStatus.lane_trouble):
//   gone    no connection of the lane's parent is open, and none was for `gone_after` (a live
//           parent re-dials a lost connection every reconnect delay, 200 ms: three tries);
//   silent  a connection is open, but no byte and no keepalive came for `silent_after`, while
//           this member owed the parent nothing (no chunk of it being verified, no reply
//           unwritten: a child that holds its parent up is not kept waiting by it).
// A parent waiting for chunks itself sends keepalives (KeepaliveInterval), so only the member
// below a failure reports it, not the whole subtree. No verdict before `grace` after Start
// (connections open level by level as Start travels down the tree) or after a lane's parent
// changed, unless the parent connected meanwhile; none on a lane this member holds whole. Every second a lane waits costs its whole
// subtree that second at the end (its parents' uploads are all in use), so the times are as
// short as the evidence allows. Times are passed in, so the rules are tested without sockets
// or sleeps. io thread only.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "collectives/plan_patch.h"

namespace gridcast {

struct LaneTrouble {
  int lane = 0;
  int parent = 0;  // its parent in the lane, a plan member index
  RepairReason reason = RepairReason::kGone;  // kGone or kSilent
  double since_s = 0;  // how long it has lasted
  bool fresh = false;  // first judged so (or judged otherwise before) in this Judge
};

struct ParentWatchTimes {
  std::chrono::milliseconds silent_after{1000};
  std::chrono::milliseconds gone_after{600};
  std::chrono::milliseconds grace{2000};
};

class ParentWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // What Judge needs to know of a lane now, beyond the events.
  struct LaneNow {
    bool held = false;  // this member holds every chunk of the lane
    bool owes = false;  // it holds the parent up: a chunk of it being verified, or a reply unwritten
  };

  // `parents`: this member's parent in each lane, -1 where it is the lane's source.
  ParentWatch(std::vector<int> parents, ParentWatchTimes times);

  void Start(Clock::time_point now);
  // `lane` has a new parent from `now` on (a plan patch): no verdict on it during the grace,
  // and none carried over from the old parent.
  void Reattached(int lane, int parent, Clock::time_point now);
  // A connection of `lane`'s parent was adopted, or ended.
  void Opened(int lane, Clock::time_point now);
  void Closed(int lane, Clock::time_point now);
  // Bytes or a keepalive arrived on `lane`.
  void Progress(int lane, Clock::time_point now);

  // Every lane's trouble at `now` (REQUIRES: lanes.size() == the number of lanes).
  std::vector<LaneTrouble> Judge(Clock::time_point now, const std::vector<LaneNow>& lanes);
  // The last verdict on `lane`: its trouble, if Judge found one.
  std::optional<RepairReason> Trouble(int lane) const { return lanes_[lane].verdict; }
  // How long `lane` has had no bytes, no keepalive and no connection opened (zero before
  // Start, during the grace before its parent connected, and for a lane this member is the
  // source of).
  Clock::duration QuietFor(int lane, Clock::time_point now) const;

 private:
  struct Lane {
    int parent = -1;
    int open = 0;
    Clock::time_point last_progress{};  // bytes, a keepalive, a connection opened, or this member owing
    Clock::time_point last_closed{};    // when `open` last went to 0 (Start, before any)
    Clock::time_point grace_until{};    // no verdict before (Start, or a new parent, + grace)...
    bool connected = false;             // ... unless the parent connected since
    std::optional<RepairReason> verdict;
  };

  const ParentWatchTimes times_;
  std::vector<Lane> lanes_;
  bool started_ = false;
};

}  // namespace gridcast
