// SendPacing: how far above its planned rate (Lane::planned_bps) a lane's source lets each of
// its connections to the lane's children send, and which of them yield to a lane behind the
// others (Yielding; docs/daemon.md, "Lane pacing").
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
#include <vector>

namespace gridcast {

// One capped connection of a lane's source, as SendPacing::Yielding sees it.
struct PacedSend {
  bool open = false;      // a connection is open and has not sent its lane yet
  double position_s = 0;  // how far its lane has been acknowledged, in seconds at the lane's planned rate
  bool keeps_up = false;  // it recently delivered at least kKeepsUp of its cap
};

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

  // Which connections yield: their cap drops from kSlack to kYield of their lane's planned
  // rate while their lane is more than kLead ahead of the lane furthest behind among those
  // that keep up. Why: where the source's upload sets the bound, TCP shares it between the
  // lanes by their congestion windows, and a lane behind the others (its parent was slow or
  // dead until a patch) stayed behind by what it lost: flat16 at 50mbit, a straggler moved 0.64
  // s in, the source sent lane 1 at 24.0 mbit and the moved lane at 23.4 to the end, which came
  // 1.1 s after lane 1's. A lane that does not keep up (a slow child) holds nothing back: the
  // upload it leaves is not the others' to give.
  static constexpr double kYield = 0.85;
  static constexpr double kLead = 0.25;    // seconds
  static constexpr double kKeepsUp = 0.8;  // of its cap
  static std::vector<bool> Yielding(const std::vector<PacedSend>& sends);

  // What each connection may send at, as a factor over its planned rate.
  double factor() const { return kSlack * growth_; }
  // ... while it yields.
  double yielding_factor() const { return kYield * growth_; }

  // Every tick: the bytes the children acknowledged on the capped connections since the last
  // call, and what the caps of the connections open now allow together (bytes per second).
  // Connections come and go (patches, ends): over the time since the last call the caps are
  // taken to have allowed the larger of then and now, so a connection's bytes are measured
  // against its cap whichever end of the tick it was open at.
  // Returns true when the caps grew (factor() changed). While `balancing` (a connection yields)
  // and for a window after, nothing counts: the lane behind then takes its whole cap where its
  // child has download to spare, and the lane that stops yielding sends a burst as its cap
  // rises, which say nothing of the network (flat16 at 50mbit: the caps grew in the window that
  // ended a straggler's lanes' balancing, and nothing was balanced after).
  bool Observe(Clock::time_point now, uint64_t acked_bytes, double caps_bytes_per_s, bool balancing = false);

 private:
  double growth_ = 1;
  bool started_ = false;
  Clock::time_point window_start_{};
  Clock::time_point last_{};
  Clock::time_point settled_at_{};  // no window counts before (balancing until a window before)
  double window_bytes_ = 0;
  double window_allowed_ = 0;  // what the caps allowed over the window, bytes
  double last_caps_ = 0;
};

}  // namespace gridcast
