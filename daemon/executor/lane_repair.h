// LaneRepair: what a hybrid plan does when a lane stops arriving. It watches every lane this
// member receives and hands the missing chunks of one whose parent is gone, silent for
// ExecutionOptions::repair_stall, or pulling the lane itself to the swarm. Parents waiting
// for a chunk send keepalives (KeepaliveInterval), so only a silent parent counts as stalled,
// never one that merely sends slowly. Inactive (every call a no-op) for push and pull plans.
// io thread only.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "daemon/executor/execution_context.h"
#include "daemon/executor/swarm.h"

namespace gridcast {

// How often a parent waiting for a chunk tells its children it is alive (KEEPALIVE frames):
// well within repair_stall, and within the children's I/O timeout.
std::chrono::milliseconds KeepaliveInterval(const ExecutionOptions& options);

class LaneRepair {
 public:
  explicit LaneRepair(ExecutionContext& context) : context_(context) {}

  // Watches the lanes from now on, fetching from `swarm` (hybrid plans only).
  void Start(std::shared_ptr<PullSwarm> swarm);
  bool active() const { return swarm_ != nullptr; }

  // Bytes or a keepalive arrived on `lane` from its parent.
  void Progress(int lane);
  // The parent connection of `lane` ended before this member held everything.
  void ParentGone(int lane);
  // The parent of `lane` said that it pulls the lane itself: its whole subtree is cut off, so
  // this member pulls too (the swarm spreads the missing chunks faster than one repairer
  // forwarding them down).
  void ParentRepairs(int lane);
  // This member pulls `lane`'s missing chunks (its keepalives tell its children so).
  bool Repairing(int lane) const { return active() && repaired_[lane]; }

 private:
  enum class ParentTrouble { kNone, kGone, kRepairing };

  // For the log line: why a lane is repaired (`endgame`: the swarm idles while it pushes).
  static const char* WhyRepaired(ParentTrouble trouble, bool endgame);
  boost::asio::awaitable<void> Watch();
  std::vector<uint64_t> MissingOf(int lane) const;

  ExecutionContext& context_;
  std::shared_ptr<PullSwarm> swarm_;
  std::vector<std::chrono::steady_clock::time_point> progress_;  // last bytes or keepalive per lane
  std::vector<ParentTrouble> trouble_;
  std::vector<bool> repaired_;  // its missing chunks were handed to the swarm
};

}  // namespace gridcast
