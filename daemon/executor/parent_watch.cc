#include "daemon/executor/parent_watch.h"

#include <algorithm>

namespace gridcast {

ParentWatch::ParentWatch(std::vector<int> parents, std::vector<uint64_t> lane_bytes, ParentWatchTimes times,
                         uint64_t chunk_bytes)
    : times_(times), chunk_bytes_(chunk_bytes) {
  lanes_.resize(parents.size());
  for (size_t l = 0; l < parents.size(); ++l) {
    lanes_[l].parent = parents[l];
    lanes_[l].lane_bytes = l < lane_bytes.size() ? lane_bytes[l] : 0;
  }
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
  watched.refused = false;
  watched.unconnected_probed = false;
  watched.verdict.reset();
  watched.samples.clear();
}

void ParentWatch::Opened(int lane, Clock::time_point now) {
  ++lanes_[lane].open;
  lanes_[lane].connected = true;
  lanes_[lane].refused = false;
  lanes_[lane].last_progress = now;
}

void ParentWatch::Closed(int lane, Clock::time_point now) {
  Lane& watched = lanes_[lane];
  if (watched.open > 0 && --watched.open == 0) watched.last_closed = now;
}

bool ParentWatch::ShouldProbe(int lane, const LaneNow& now_lane, Clock::time_point now) {
  Lane& watched = lanes_[lane];
  if (!started_ || watched.parent < 0 || watched.open > 0 || watched.refused || watched.verdict || now_lane.held) {
    return false;
  }
  if (watched.connected) return now >= watched.last_closed;
  // Since Start or the patch, never connected: once.
  if (watched.unconnected_probed || now - watched.last_closed < times_.gone_after) return false;
  watched.unconnected_probed = true;
  return true;
}

void ParentWatch::Refused(int lane, int parent) {
  Lane& watched = lanes_[lane];
  if (watched.parent == parent && watched.open == 0) watched.refused = true;
}

void ParentWatch::Arrived(int lane, uint64_t bytes) {
  Lane& watched = lanes_[lane];
  if (!watched.kernel_bytes) watched.samples.clear();  // counted in chunks until now
  watched.kernel_bytes = watched.kernel_bytes.value_or(0) + bytes;
}

void ParentWatch::Progress(int lane, Clock::time_point now) {
  lanes_[lane].last_progress = std::max(lanes_[lane].last_progress, now);
}

std::vector<LaneTrouble> ParentWatch::Judge(Clock::time_point now, const std::vector<LaneNow>& lanes) {
  std::vector<std::optional<RepairReason>> verdicts(lanes_.size());
  std::vector<Clock::time_point> since(lanes_.size());
  std::vector<double> measured_bps(lanes_.size(), 0);
  std::vector<double> expected_bps(lanes_.size(), 0);
  for (size_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    if (lanes[l].owes) lane.last_progress = now;
    // The grace covers a lane's first connection only: once a parent connected, its loss counts.
    if (!started_ || lane.parent < 0 || lanes[l].held || (now < lane.grace_until && !lane.connected && !lane.refused)) {
      lane.samples.clear();
      continue;
    }
    if (lane.open == 0 && (lane.refused || now - lane.last_closed >= times_.gone_after)) {
      verdicts[l] = RepairReason::kGone;
      since[l] = lane.last_closed;
    } else if (lane.open > 0 && now - lane.last_progress >= times_.silent_after) {
      verdicts[l] = RepairReason::kSilent;
      since[l] = lane.last_progress;
    }
    if (!lane.connected) continue;
    lane.samples.push_back({now, lane.Counted()});
    while (lane.samples.size() > 2 && lane.samples[1].at <= now - times_.slow_after) lane.samples.pop_front();
  }
  JudgeSlow(now, lanes, times_.slow_after, kSlowFraction, verdicts, since, measured_bps, expected_bps);
  JudgeSlow(now, lanes, times_.very_slow_after, kVerySlowFraction, verdicts, since, measured_bps, expected_bps);
  std::vector<LaneTrouble> troubles;
  for (size_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    const bool fresh = verdicts[l].has_value() && verdicts[l] != lane.verdict;
    lane.verdict = verdicts[l];
    if (!verdicts[l]) continue;
    const bool slow = *verdicts[l] == RepairReason::kSlow;
    troubles.push_back({static_cast<int>(l), lane.parent, *verdicts[l],
                        std::chrono::duration<double>(now - since[l]).count(), slow ? measured_bps[l] : 0,
                        slow ? expected_bps[l] : 0, fresh});
  }
  return troubles;
}

void ParentWatch::JudgeSlow(Clock::time_point now, const std::vector<LaneNow>& lanes, Clock::duration window,
                            double fraction, std::vector<std::optional<RepairReason>>& verdicts,
                            std::vector<Clock::time_point>& since, std::vector<double>& measured_bps,
                            std::vector<double>& expected_bps) const {
  // Each lane's pace over the window, per byte of its share: a healthy plan's lanes match. From
  // the latest sample at least `window` old.
  std::vector<std::optional<double>> pace(lanes_.size());
  std::vector<const Sample*> from(lanes_.size(), nullptr);
  std::vector<double> bps(lanes_.size(), 0);
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const Lane& lane = lanes_[l];
    if (lane.lane_bytes == 0) continue;
    for (auto it = lane.samples.rbegin(); it != lane.samples.rend(); ++it) {
      if (it->at <= now - window) {
        from[l] = &*it;
        break;
      }
    }
    if (from[l] == nullptr) continue;
    const double window_s = std::chrono::duration<double>(now - from[l]->at).count();
    bps[l] = 8.0 * static_cast<double>(lane.Counted() - from[l]->bytes) / window_s;
    pace[l] = bps[l] / static_cast<double>(lane.lane_bytes);
  }
  // The usual pace: the upper median of every lane measured, once (a member may receive
  // thousands of lanes). With two lanes that is the faster one's.
  std::vector<double> paces;
  for (const std::optional<double>& p : pace) {
    if (p) paces.push_back(*p);
  }
  if (paces.size() < 2) return;
  std::nth_element(paces.begin(), paces.begin() + paces.size() / 2, paces.end());
  const double usual = paces[paces.size() / 2];  // bits a second per byte of share
  const double slow_window_s = std::chrono::duration<double>(times_.slow_after).count();
  const double window_s = std::chrono::duration<double>(window).count();
  for (size_t l = 0; l < lanes_.size(); ++l) {
    const Lane& lane = lanes_[l];
    if (verdicts[l] || !pace[l] || lanes[l].owes) continue;
    const double usual_window_bytes = usual * static_cast<double>(lane.lane_bytes) * window_s / 8;
    if (usual_window_bytes < kChunksPerJudgedWindow * static_cast<double>(chunk_bytes_)) continue;
    const bool ending = 8.0 * static_cast<double>(lanes[l].remaining_bytes) <=
                        usual * static_cast<double>(lane.lane_bytes) * slow_window_s;
    if (*pace[l] < fraction * usual && !ending) {
      verdicts[l] = RepairReason::kSlow;
      since[l] = from[l]->at;
      measured_bps[l] = bps[l];
      expected_bps[l] = usual * static_cast<double>(lane.lane_bytes);
    }
  }
}

ParentWatch::Clock::duration ParentWatch::QuietFor(int lane, Clock::time_point now) const {
  const Lane& watched = lanes_[lane];
  if (!started_ || watched.parent < 0) return Clock::duration::zero();
  const Clock::time_point quiet_from = watched.connected ? watched.last_progress
                                                         : std::max(watched.last_progress, watched.grace_until);
  return std::max(Clock::duration::zero(), now - quiet_from);
}

}  // namespace gridcast
