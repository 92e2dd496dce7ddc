#include "daemon/executor/parent_watch.h"

#include <algorithm>

namespace gridcast {

ParentWatch::ParentWatch(std::vector<int> parents, ParentWatchTimes times) : times_(times) {
  lanes_.resize(parents.size());
  for (size_t l = 0; l < parents.size(); ++l) lanes_[l].parent = parents[l];
}

void ParentWatch::Start(Clock::time_point now) {
  started_ = true;
  for (Lane& lane : lanes_) {
    lane.grace_until = now + times_.grace;
    lane.last_progress = std::max(lane.last_progress, now);
    if (lane.open == 0) lane.last_closed = now;
  }
}

void ParentWatch::Reattached(int lane, int parent, Clock::time_point now) {
  Lane& watched = lanes_[lane];
  watched.parent = parent;
  watched.grace_until = now + times_.grace;
  watched.last_progress = now;
  watched.last_closed = now;
  watched.connected = false;
  watched.verdict.reset();
}

void ParentWatch::Opened(int lane, Clock::time_point now) {
  ++lanes_[lane].open;
  lanes_[lane].connected = true;
  lanes_[lane].last_progress = now;
}

void ParentWatch::Closed(int lane, Clock::time_point now) {
  Lane& watched = lanes_[lane];
  if (watched.open > 0 && --watched.open == 0) watched.last_closed = now;
}

void ParentWatch::Progress(int lane, Clock::time_point now) { lanes_[lane].last_progress = now; }

std::vector<LaneTrouble> ParentWatch::Judge(Clock::time_point now, const std::vector<LaneNow>& lanes) {
  std::vector<LaneTrouble> troubles;
  for (size_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    if (lanes[l].owes) lane.last_progress = now;
    std::optional<RepairReason> verdict;
    Clock::time_point since{};
    // The grace covers a lane's first connection only: once a parent connected, its loss counts.
    if (started_ && lane.parent >= 0 && !lanes[l].held && (now >= lane.grace_until || lane.connected)) {
      if (lane.open == 0 && now - lane.last_closed >= times_.gone_after) {
        verdict = RepairReason::kGone;
        since = lane.last_closed;
      } else if (lane.open > 0 && now - lane.last_progress >= times_.silent_after) {
        verdict = RepairReason::kSilent;
        since = lane.last_progress;
      }
    }
    const bool fresh = verdict.has_value() && verdict != lane.verdict;
    lane.verdict = verdict;
    if (!verdict) continue;
    troubles.push_back({static_cast<int>(l), lane.parent, *verdict,
                        std::chrono::duration<double>(now - since).count(), fresh});
  }
  return troubles;
}

ParentWatch::Clock::duration ParentWatch::QuietFor(int lane, Clock::time_point now) const {
  const Lane& watched = lanes_[lane];
  if (!started_ || watched.parent < 0) return Clock::duration::zero();
  const Clock::time_point quiet_from = watched.connected ? watched.last_progress
                                                         : std::max(watched.last_progress, watched.grace_until);
  return std::max(Clock::duration::zero(), now - quiet_from);
}

}  // namespace gridcast
