#include "daemon/executor/lane_schedule.h"

#include <algorithm>
#include <string>

namespace gridcast {

LaneSchedule::LaneSchedule(const Plan& plan, int self, std::string spill_dir)
    : plan_(plan), self_(self), spill_dir_(std::move(spill_dir)) {
  cursors_.resize(plan_.lanes.size());
  held_prefix_.assign(plan_.lanes.size(), 0);
  opened_.resize(plan_.lanes.size());
  for (const Lane& lane : plan_.lanes) {
    std::vector<Edge> children;
    size_t streams = 0;
    int from_parent = lane.streams;
    for (const Fanout& fanout : lane.fanouts) {
      for (size_t i = 0; i < fanout.children.size(); ++i) {
        if (fanout.children[i] == self_) from_parent = lane.StreamsOn(fanout, i);
        if (fanout.parent != self_) continue;
        children.push_back({fanout.children[i], lane.StreamsOn(fanout, i)});
        streams += static_cast<size_t>(lane.StreamsOn(fanout, i));
      }
    }
    children_.push_back(std::move(children));
    edge_streams_.push_back(streams);
    parent_.push_back(lane.ParentOf(self_));
    parent_streams_.push_back(from_parent);
  }
  if (plan_.shared_chunks) {
    logged_in_.assign(plan_.NumChunks(), -1);
    appended_.resize(plan_.lanes.size());
    return;
  }
  std::vector<std::vector<ChunkRange>> ranges;
  for (const Lane& lane : plan_.lanes) {
    sequence_.emplace_back(lane.chunks);
    ranges.push_back(lane.chunks);
  }
  owners_.emplace(ranges);
  logged_count_ = plan_.NumChunks();
}

uint64_t LaneSchedule::LogSize(int lane) const {
  return plan_.shared_chunks ? appended_[lane].size() : sequence_[lane].size();
}

uint64_t LaneSchedule::LoggedAt(int lane, uint64_t position) const {
  return plan_.shared_chunks ? appended_[lane][position] : sequence_[lane][position];
}

uint64_t LaneSchedule::HeldPrefix(int lane, const std::function<bool(uint64_t)>& holds) {
  uint64_t& prefix = held_prefix_[lane];
  while (prefix < LogSize(lane) && holds(LoggedAt(lane, prefix))) ++prefix;
  return prefix;
}

bool LaneSchedule::HoldsWholeLane(int lane, const std::function<bool(uint64_t)>& holds) {
  return HeldPrefix(lane, holds) == LogSize(lane) && EveryChunkLogged();
}

int LaneSchedule::LoggedIn(uint64_t chunk) const {
  if (chunk >= plan_.NumChunks()) return -1;
  return plan_.shared_chunks ? logged_in_[chunk] : owners_->OwnerOf(chunk);
}

uint64_t LaneSchedule::DeliveredSlot(int lane, uint64_t chunk) const {
  return plan_.shared_chunks ? chunk : *sequence_[lane].PositionOf(chunk);
}

bool LaneSchedule::ReceivesAnyLane() const {
  return std::any_of(parent_.begin(), parent_.end(), [](int p) { return p >= 0; });
}

Hello LaneSchedule::HelloAsParent(const PlanId& id, int lane, int stream, int stream_count) const {
  Hello hello;
  hello.plan_id = id;
  hello.lane = static_cast<uint32_t>(lane);
  hello.parent = static_cast<uint32_t>(self_);
  hello.stream = static_cast<uint32_t>(stream);
  hello.stream_count = static_cast<uint32_t>(stream_count);
  return hello;
}

Status LaneSchedule::CheckParent(const Hello& hello) const {
  if (hello.lane >= plan_.lanes.size()) {
    return Status::InvalidArgument("lane " + std::to_string(hello.lane) + " is not in the plan");
  }
  const int parent = parent_[hello.lane];
  if (parent < 0 || static_cast<uint32_t>(parent) != hello.parent) {
    return Status::PermissionDenied("member " + std::to_string(hello.parent) +
                                    " is not this member's parent in lane " + std::to_string(hello.lane));
  }
  if (static_cast<uint32_t>(parent_streams_[hello.lane]) != hello.stream_count) {
    return Status::InvalidArgument("the plan has " + std::to_string(parent_streams_[hello.lane]) +
                                   " streams on this edge, not " + std::to_string(hello.stream_count));
  }
  return Status::Ok();
}

void LaneSchedule::ApplyMove(const EdgeMove& move) {
  const int lane = move.lane;
  const int streams = move.streams > 0 ? move.streams : plan_.lanes[lane].streams;
  if (move.child == self_) {
    parent_[lane] = move.new_parent;
    parent_streams_[lane] = streams;
  }
  std::vector<Edge>& children = children_[lane];
  const auto edge = std::find_if(children.begin(), children.end(), [&](const Edge& e) { return e.child == move.child; });
  if (move.old_parent == self_ && edge != children.end()) {
    edge_streams_[lane] -= static_cast<size_t>(edge->streams);
    children.erase(edge);
    delivered_.erase({lane, move.child});
    std::erase_if(opened_[lane], [&](const std::pair<int, int>& opened) { return opened.first == move.child; });
  } else if (move.new_parent == self_ && edge == children.end()) {
    children.push_back({move.child, streams});
    edge_streams_[lane] += static_cast<size_t>(streams);
  }
}

bool LaneSchedule::AddToLog(int lane, uint64_t chunk) {
  if (!plan_.shared_chunks || logged_in_[chunk] >= 0) return false;
  logged_in_[chunk] = static_cast<int16_t>(lane);
  ++logged_count_;
  appended_[lane].push_back(chunk);
  return true;
}

bool LaneSchedule::Carries(int lane, uint64_t chunk, int stream, int stream_count) const {
  if (chunk >= plan_.NumChunks()) return false;
  if (plan_.shared_chunks) return logged_in_[chunk] < 0 || logged_in_[chunk] == lane;
  const std::optional<uint64_t> position = sequence_[lane].PositionOf(chunk);
  return position && static_cast<int>(*position % static_cast<uint64_t>(stream_count)) == stream;
}

void LaneSchedule::AddCursor(int lane, const Cursor* cursor) {
  cursors_[lane].push_back(cursor);
  opened_[lane].emplace(cursor->child, cursor->stream);
}

void LaneSchedule::RemoveCursor(int lane, const Cursor* cursor) { std::erase(cursors_[lane], cursor); }

bool LaneSchedule::ClaimNext(int lane) {
  if (!plan_.shared_chunks || parent_[lane] >= 0 || next_unclaimed_ >= plan_.NumChunks()) return false;
  const uint64_t logged = appended_[lane].size();
  const auto handed_all = [logged](const Cursor* cursor) { return cursor->next_position >= logged; };
  if (!std::all_of(cursors_[lane].begin(), cursors_[lane].end(), handed_all)) return false;
  return AddToLog(lane, next_unclaimed_++);
}

bool LaneSchedule::Lags(int lane, uint64_t unopened_slack) const {
  const uint64_t logged = LogSize(lane);
  if (opened_[lane].size() < edge_streams_[lane]) return logged > unopened_slack;
  for (const Cursor* cursor : cursors_[lane]) {
    if (cursor->next_position >= logged) continue;
    const uint64_t waiting = (logged - 1 - cursor->next_position) / cursor->stream_count + 1;
    if (waiting > kLaneSlackChunks) return true;
  }
  return false;
}

bool LaneSchedule::Delivered(int lane, int child, uint64_t chunk) {
  // A sender to a child moved away may still report what it had sent.
  const std::vector<Edge>& children = children_[lane];
  if (std::none_of(children.begin(), children.end(), [&](const Edge& e) { return e.child == child; })) return false;
  ChunkBits& held = delivered_[{lane, child}];
  if (held.empty()) held = ChunkBits(plan_.shared_chunks ? plan_.NumChunks() : sequence_[lane].size(), false, spill_dir_);
  const uint64_t slot = DeliveredSlot(lane, chunk);
  if (held[slot]) return false;
  held.Set(slot);
  return ForwardedToAll(chunk);
}

bool LaneSchedule::ForwardedToAll(uint64_t chunk) const {
  const int lane = LoggedIn(chunk);
  if (lane < 0) return true;
  const uint64_t slot = DeliveredSlot(lane, chunk);
  return std::all_of(children_[lane].begin(), children_[lane].end(), [&](const Edge& child) {
    auto edge = delivered_.find({lane, child.child});
    return edge != delivered_.end() && edge->second[slot];
  });
}

}  // namespace gridcast
