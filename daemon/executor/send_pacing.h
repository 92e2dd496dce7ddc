// SendPacing: how far above its planned rate (Lane::planned_bps) a lane's source lets each of
// its connections to the lane's children send (docs/daemon.md, "Lane pacing").
//
// Why a cap: TCP shares the source's upload between its connections by their congestion
// windows, not by the plan. After a plan patch a child with download to spare took 30 of the
// source's 50 mbit for its lane and the orphan moved under the source got 21 for the other,
// and what that lane lost at the source every member below lost at the end (flat16 at 50mbit,
// one member killed: 1.29 of the bound; with each lane connection capped at 1.04 of its
// planned rate, 1.11-1.12).
// Why it grows: a network faster than its description would be held to the description. When
// the capped connections together send at their caps (kAtCaps) over a window, every cap grows
// by kGrowth, for good; a lane below its cap (a slow child, a lane waiting for another) holds
// nothing back. Pure: times and byte counts are passed in.
#pragma once

#include <chrono>
#include <cstdint>

namespace gridcast {

class SendPacing {
 public:
  using Clock = std::chrono::steady_clock;
  // Over the planned rate at first: room for a lane to catch up, and to take what TCP's
  // sharing gives another lane too little of, but not the other lanes' shares.
  static constexpr double kSlack = 1.04;
  // Sending at this fraction of the caps or more is sending at the caps: paced TCP delivers
  // within a percent or two of its cap, while a link at its planned rate delivers about 0.95
  // of it as payload (headers), 0.92 of the cap.
  static constexpr double kAtCaps = 0.97;
  static constexpr double kGrowth = 1.25;
  static constexpr std::chrono::milliseconds kWindow{1000};

  // What each connection may send at, as a factor over its planned rate.
  double factor() const { return kSlack * growth_; }

  // Every tick: the bytes the children acknowledged on the capped connections since the last
  // call, and what the caps of the connections open now allow together (bytes per second).
  // Connections come and go (patches, ends): over the time since the last call the caps are
  // taken to have allowed the larger of then and now, so a connection's bytes are measured
  // against its cap whichever end of the tick it was open at.
  // Returns true when the caps grew (factor() changed).
  bool Observe(Clock::time_point now, uint64_t acked_bytes, double caps_bytes_per_s);

 private:
  double growth_ = 1;
  bool started_ = false;
  Clock::time_point window_start_{};
  Clock::time_point last_{};
  double window_bytes_ = 0;
  double window_allowed_ = 0;  // what the caps allowed over the window, bytes
  double last_caps_ = 0;
};

}  // namespace gridcast
