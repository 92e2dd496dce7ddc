#include "collectives/simulator/chunk_simulator.h"

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>

#include "collectives/simulator/max_min_fair.h"

namespace gridcast {
namespace {

// Sizes of a lane's chunks in the order they flow (increasing chunk index).
std::vector<uint64_t> LaneChunkSizes(const Plan& plan, const Lane& lane) {
  std::vector<uint64_t> chunks;
  for (const ChunkRange& range : lane.chunks) {
    for (uint64_t c = range.begin; c < range.end; c += range.step) chunks.push_back(c);
  }
  std::sort(chunks.begin(), chunks.end());
  for (uint64_t& c : chunks) c = plan.ChunkSize(c);
  return chunks;
}

class ChunkSimulation {
 public:
  ChunkSimulation(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                  const SimOptions& options, const SimStart& start)
      : setup_(setup), window_(options.window_chunks), overhead_s_(options.per_message_overhead_s),
        result_(EmptySimResult(setup, net, SimMode::kChunkLevel)) {
    const int p = setup.num_members;
    const int num_lanes = static_cast<int>(plan.lanes.size());
    held_.assign(static_cast<size_t>(num_lanes) * p, 0);
    out_begin_.assign(static_cast<size_t>(num_lanes) * p, 0);
    out_end_.assign(static_cast<size_t>(num_lanes) * p, 0);
    absent_ = start.absent;
    absent_.resize(p, false);
    for (int l = 0; l < num_lanes; ++l) {
      sizes_.push_back(LaneChunkSizes(plan, plan.lanes[l]));
      for (int m = 0; m < p && !start.lane_held.empty(); ++m) held_[Slot(l, m)] = start.lane_held[m][l];
      held_[Slot(l, plan.lanes[l].source)] = sizes_[l].size();
    }
    const int num_edges = static_cast<int>(setup.edges.size());
    for (int e = num_edges - 1; e >= 0; --e) {
      const size_t slot = Slot(setup.edges[e].lane, setup.edges[e].parent);
      if (out_end_[slot] == 0) out_end_[slot] = e + 1;
      out_begin_[slot] = e;
    }
    next_.assign(num_edges, 0);
    // An edge sends its child what the child lacks: from the child's prefix on.
    for (int e = 0; e < num_edges; ++e) next_[e] = held_[Slot(setup.edges[e].lane, setup.edges[e].child)];
    in_flight_.assign(num_edges, 0);
    transmitting_.assign(num_edges, false);
  }

  // Runs to the end, or until `until_s` (what has arrived by then is held_).
  SimResult Run(double until_s = kInfinity) {
    for (int e = 0; e < static_cast<int>(setup_.edges.size()); ++e) TryStart(e);
    while (!active_.empty() || !events_.empty()) {
      if (rates_stale_) SolveRates();
      double done_at = kInfinity;
      for (size_t i = 0; i < active_.size(); ++i) {
        done_at = std::min(done_at, now_ + active_[i].remaining_bytes / rates_[i]);
      }
      const double event_at = events_.empty() ? kInfinity : events_.front().time;
      if (std::min(done_at, event_at) > until_s) break;
      if (done_at <= event_at) {
        FinishTransmissions(done_at);
      } else {
        Advance(event_at);
        std::pop_heap(events_.begin(), events_.end(), std::greater<>());
        const Event event = events_.back();
        events_.pop_back();
        if (event.kind == kReady) {
          BeginTransmission(event.edge);
        } else {
          Arrive(event.edge);
        }
      }
    }
    for (double t : result_.member_completion_s) result_.completion_s = std::max(result_.completion_s, t);
    return std::move(result_);
  }

  SimStart Held() const {
    SimStart state;
    state.absent = absent_;
    state.lane_held.assign(setup_.num_members, std::vector<uint64_t>(sizes_.size()));
    for (int m = 0; m < setup_.num_members; ++m) {
      for (size_t l = 0; l < sizes_.size(); ++l) state.lane_held[m][l] = held_[Slot(static_cast<int>(l), m)];
    }
    return state;
  }

 private:
  struct Transfer {
    int edge;
    uint64_t bytes;
    double remaining_bytes;
  };
  enum EventKind { kArrival, kReady };
  struct Event {
    double time;
    uint64_t sequence;  // ties in time resolve in the order the events were made
    int edge;
    EventKind kind;     // a chunk arrives, or its sender's per-chunk work is done
    bool operator>(const Event& other) const {
      return std::tie(time, sequence) > std::tie(other.time, other.sequence);
    }
  };

  size_t Slot(int lane, int member) const {
    return static_cast<size_t>(lane) * setup_.num_members + member;
  }

  // Starts the edge's next chunk if the parent has it, the edge is idle and the window allows.
  void TryStart(int e) {
    const SimEdge& edge = setup_.edges[e];
    if (transmitting_[e] || in_flight_[e] >= window_ || next_[e] >= held_[Slot(edge.lane, edge.parent)] ||
        absent_[edge.parent] || absent_[edge.child]) {
      return;
    }
    transmitting_[e] = true;
    ++in_flight_[e];
    if (overhead_s_ > 0) {
      // The sender's per-chunk work comes first; the bytes flow once it is done.
      events_.push_back({now_ + overhead_s_, sequence_++, e, kReady});
      std::push_heap(events_.begin(), events_.end(), std::greater<>());
      return;
    }
    BeginTransmission(e);
  }

  void BeginTransmission(int e) {
    const uint64_t bytes = sizes_[setup_.edges[e].lane][next_[e]++];
    active_.push_back({e, bytes, static_cast<double>(bytes)});
    rates_stale_ = true;
  }

  void SolveRates() {
    problem_.Clear(static_cast<int>(setup_.capacity_bytes_per_s.size()));
    problem_.capacity = setup_.capacity_bytes_per_s;
    for (const Transfer& t : active_) {
      const SimEdge& edge = setup_.edges[t.edge];
      problem_.AddFlow(edge.resources, edge.weight, kInfinity, -1);
    }
    rates_ = solver_.Solve(problem_);
    rates_stale_ = false;
  }

  void Advance(double time) {
    const double dt = time - now_;
    for (size_t i = 0; i < active_.size(); ++i) {
      active_[i].remaining_bytes = rates_[i] == kInfinity ? 0 : active_[i].remaining_bytes - rates_[i] * dt;
    }
    now_ = time;
  }

  // Ends every transmission finishing at `time` (within rounding), in start order.
  void FinishTransmissions(double time) {
    // Transfers whose end lies within a relative 1e-12 of `time` end together.
    const double slack = 1e-12 * std::max(1.0, time);
    std::vector<int> ended;
    std::vector<Transfer> still;
    std::vector<double> still_rates;
    for (size_t i = 0; i < active_.size(); ++i) {
      if (now_ + active_[i].remaining_bytes / rates_[i] <= time + slack) {
        ended.push_back(active_[i].edge);
        CountEdgeBytes(setup_, setup_.edges[active_[i].edge], active_[i].bytes, result_);
      } else {
        still.push_back(active_[i]);
        still_rates.push_back(rates_[i]);
      }
    }
    active_ = std::move(still);
    rates_ = std::move(still_rates);
    Advance(time);
    for (int e : ended) {
      transmitting_[e] = false;
      events_.push_back({now_ + setup_.edges[e].delay_s, sequence_++, e, kArrival});
      std::push_heap(events_.begin(), events_.end(), std::greater<>());
    }
    rates_stale_ = true;
    for (int e : ended) TryStart(e);
  }

  void Arrive(int e) {
    const SimEdge& edge = setup_.edges[e];
    --in_flight_[e];
    const size_t slot = Slot(edge.lane, edge.child);
    if (++held_[slot] == sizes_[edge.lane].size()) {
      double& done = result_.member_completion_s[edge.child];
      done = std::max(done, now_);
    }
    TryStart(e);
    for (int out = out_begin_[slot]; out < out_end_[slot]; ++out) TryStart(out);
  }

  const SimSetup& setup_;
  const int window_;
  const double overhead_s_;
  SimResult result_;
  std::vector<std::vector<uint64_t>> sizes_;  // per lane, chunk sizes in flow order
  std::vector<size_t> held_;                  // per (lane, member): chunks arrived (a prefix)
  std::vector<bool> absent_;                  // per member: takes no part (SimStart::absent)
  std::vector<int> out_begin_, out_end_;      // per (lane, member): its edges, in child order
  std::vector<size_t> next_;                  // per edge: next chunk position to send
  std::vector<int> in_flight_;                // per edge
  std::vector<bool> transmitting_;            // per edge: busy with a chunk (overhead or bytes)
  std::vector<Transfer> active_;              // transmitting now, in start order
  std::vector<double> rates_;                 // bytes/s, parallel to active_
  bool rates_stale_ = true;
  std::vector<Event> events_;                 // min-heap
  uint64_t sequence_ = 0;
  double now_ = 0;
  FairShareProblem problem_;
  MaxMinFairSolver solver_;
};

}  // namespace

SimResult SimulateChunkLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                             const SimOptions& options) {
  return ChunkSimulation(plan, net, setup, options, SimStart{}).Run();
}

Result<SimResult> SimulateChunkLevelFrom(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                                         const SimOptions& options, const SimStart& start) {
  ChunkSimulation simulation(plan, net, setup, options, start);
  SimResult result = simulation.Run();
  const SimStart end = simulation.Held();
  for (size_t m = 0; m < end.lane_held.size(); ++m) {
    if (end.absent[m]) continue;
    for (size_t l = 0; l < plan.lanes.size(); ++l) {
      if (end.lane_held[m][l] < plan.lanes[l].ChunkCount()) {
        return Status::FailedPrecondition(plan.members[m] + " never holds lane " + std::to_string(l) +
                                          ": a member above it takes no part");
      }
    }
  }
  return result;
}

SimStart ChunkLevelStateAt(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                           const SimOptions& options, const SimStart& start, double until_s) {
  ChunkSimulation simulation(plan, net, setup, options, start);
  (void)simulation.Run(until_s);
  return simulation.Held();
}

}  // namespace gridcast
