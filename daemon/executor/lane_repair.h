// LaneRepair: what a hybrid plan does when a lane stops arriving. It hands the missing chunks
// of a lane whose parent was gone or silent for ExecutionOptions::repair_stall (ParentWatch's
// quiet time: a plan patch that gave the lane a new parent meanwhile starts it again), or whose
// parent pulls the lane itself, to the swarm. Parents waiting for a chunk send keepalives
// (KeepaliveInterval), so only a silent parent counts as stalled, never one that merely sends
// slowly. Inactive (every call a no-op) for push and pull plans. io thread only.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "daemon/executor/execution_context.h"
#include "daemon/executor/swarm.h"

namespace gridcast {

class LaneRepair {
 public:
  explicit LaneRepair(ExecutionContext& context) : context_(context) {}

  // Repairs from now on, fetching from `swarm` (hybrid plans only).
  void Start(std::shared_ptr<PullSwarm> swarm);
  bool active() const { return swarm_ != nullptr; }

  // The parent of `lane` said that it pulls the lane itself: its whole subtree is cut off, so
  // this member pulls too (the swarm spreads the missing chunks faster than one repairer
  // forwarding them down).
  void ParentRepairs(int lane);
  // This member pulls `lane`'s missing chunks (its keepalives tell its children so).
  bool Repairing(int lane) const { return active() && repaired_[lane]; }
  // Hands the lanes stalled at `now` to the swarm (after ParentWatch judged them).
  void Tick(std::chrono::steady_clock::time_point now);

 private:
  std::vector<uint64_t> MissingOf(int lane) const;

  ExecutionContext& context_;
  std::shared_ptr<PullSwarm> swarm_;
  std::vector<bool> parent_repairs_;  // its parent said it pulls the lane
  std::vector<bool> repaired_;        // its missing chunks were handed to the swarm
};

}  // namespace gridcast
