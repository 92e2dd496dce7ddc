#include "collectives/simulator/flow_simulator.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <tuple>

#include "collectives/simulator/max_min_fair.h"

namespace gridcast {
namespace {

// A lane streams when it carries at least this many chunks per hop of its deepest path; the
// trailing fluid agrees with the chunk level within about 1% there (flow_simulator.h).
constexpr uint64_t kStreamingChunksPerHop = 16;

// Seconds until a gap of `gap_bytes` closes at `closing_rate` (bytes/s); 0 if already closed.
double TimeToClose(double gap_bytes, double closing_rate) {
  if (gap_bytes <= 0 || closing_rate == kInfinity) return 0;
  return closing_rate > 0 ? gap_bytes / closing_rate : kInfinity;
}

struct LaneShape {
  double bytes = 0;
  double first_chunk_bytes = 0;
  double last_chunk_bytes = 0;
};

LaneShape ShapeOf(const Plan& plan, int lane_index) {
  const Lane& lane = plan.lanes[lane_index];
  LaneShape shape;
  shape.bytes = static_cast<double>(plan.LaneBytes(lane_index));
  if (shape.bytes > 0) {
    shape.first_chunk_bytes = static_cast<double>(plan.ChunkSize(lane.FirstChunk()));
    shape.last_chunk_bytes = static_cast<double>(plan.ChunkSize(lane.LastChunk()));
  }
  return shape;
}

// Lanes whose flows are stepped: limited by the whole chunks their parent holds, with the
// per-chunk work as a pause, which is the chunk level's own rule. The trailing fluid is kept
// where it is accurate and cheaper: lanes that stream (at least kStreamingChunksPerHop chunks
// per hop of their deepest path) in plans of one stream count. Stepping costs an event per
// chunk boundary (fewer where flows cross them together), so it is used where the fluid errs:
// on short lanes over long paths, where the lanes' chunks interleave at every node, and where
// stream counts differ, so a many-stream edge squeezes its neighbours chunk by chunk. With
// `trail_short_lanes` (SimOptions::flow_trail_short_lanes) the depth is not counted: only
// lanes of fewer than kStreamingChunksPerHop chunks are stepped, which costs few events.
std::vector<bool> SteppedLanes(const Plan& plan, const SimSetup& setup, bool trail_short_lanes) {
  std::vector<bool> stepped(plan.lanes.size(), false);
  std::vector<uint64_t> hops(setup.edges.size(), 1);
  bool mixed_streams = false;
  for (size_t e = 0; e < setup.edges.size(); ++e) {
    const SimEdge& edge = setup.edges[e];
    mixed_streams |= edge.weight != setup.edges[0].weight;
    if (edge.feeder >= 0) hops[e] = hops[edge.feeder] + 1;  // feeders come first
    const uint64_t hops_counted = trail_short_lanes ? 1 : hops[e];
    if (plan.lanes[edge.lane].ChunkCount() < kStreamingChunksPerHop * hops_counted) {
      stepped[edge.lane] = true;
    }
  }
  if (mixed_streams) stepped.assign(plan.lanes.size(), true);
  return stepped;
}

class FluidSimulation {
 public:
  FluidSimulation(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                  const SimOptions& options)
      : setup_(setup), merge_fraction_(options.flow_merge_fraction),
        overhead_s_(options.per_message_overhead_s),
        result_(EmptySimResult(setup, net, SimMode::kFlowLevel)) {
    std::vector<LaneShape> shapes;
    for (int l = 0; l < static_cast<int>(plan.lanes.size()); ++l) shapes.push_back(ShapeOf(plan, l));
    const std::vector<bool> stepped = SteppedLanes(plan, setup, options.flow_trail_short_lanes);
    const int num_edges = static_cast<int>(setup.edges.size());
    std::vector<int> flow_of(num_edges, -1);
    for (int e = 0; e < num_edges; ++e) {
      const SimEdge& edge = setup.edges[e];
      const LaneShape& shape = shapes[edge.lane];
      if (shape.bytes == 0) continue;
      Flow flow;
      flow.edge = e;
      flow.feeder = edge.feeder >= 0 ? flow_of[edge.feeder] : -1;
      flow.shape = shape;
      flow.stepped = stepped[edge.lane];
      flow.arrived = flow.next_boundary = shape.first_chunk_bytes;
      double fastest = kInfinity;
      for (int r : edge.resources) fastest = std::min(fastest, setup.capacity_bytes_per_s[r]);
      // The sender's per-chunk work holds the edge for the overhead before each chunk's
      // bytes: at most one chunk per (overhead + transmission at the fastest rate). A stepped
      // flow pauses for it instead.
      const double transmit_s = fastest == kInfinity ? 0 : shape.first_chunk_bytes / fastest;
      const double overhead_s = options.per_message_overhead_s;
      if (overhead_s > 0 && !flow.stepped) {
        flow.window_cap = shape.first_chunk_bytes / (overhead_s + transmit_s);
      }
      // At most `window` chunks per (overhead + transmission + delay); a lane that fits in the
      // window never waits for it.
      const double cycle_s = overhead_s + transmit_s + edge.delay_s;
      if (cycle_s > 0 && plan.lanes[edge.lane].ChunkCount() > static_cast<uint64_t>(options.window_chunks)) {
        flow.window_cap = std::min(flow.window_cap, options.window_chunks * shape.first_chunk_bytes / cycle_s);
      }
      flow_of[e] = static_cast<int>(flows_.size());
      flows_.push_back(flow);
      CountEdgeBytes(setup, edge, static_cast<uint64_t>(shape.bytes), result_);
    }
    // The flows each flow feeds, in flow order (a CSR index).
    fed_begin_.assign(flows_.size() + 1, 0);
    for (const Flow& flow : flows_) {
      if (flow.feeder >= 0) ++fed_begin_[flow.feeder + 1];
    }
    for (size_t f = 0; f < flows_.size(); ++f) fed_begin_[f + 1] += fed_begin_[f];
    fed_.resize(fed_begin_.back());
    std::vector<int> next(fed_begin_.begin(), fed_begin_.end() - 1);
    for (size_t f = 0; f < flows_.size(); ++f) {
      if (flows_[f].feeder >= 0) fed_[next[flows_[f].feeder]++] = static_cast<int>(f);
    }
    problem_index_.assign(flows_.size(), -1);
  }

  SimResult Run() {
    for (size_t f = 0; f < flows_.size(); ++f) {
      if (flows_[f].feeder < 0) Schedule(0, kStart, static_cast<int>(f));
    }
    bool changed = true;
    while (true) {
      while (!timed_.empty() && timed_.front().time <= now_ + MergeWindow()) {
        ApplyTimed();
        changed = true;
      }
      SolveRates();
      double next = NextEventTime();
      if (next == kInfinity) break;
      // Events within the merge window are handled by looking ahead that far; an iteration
      // that changed nothing must let time move on by at least that much.
      if (!changed) next = std::max(next, now_ + MergeWindow());
      Advance(next);
      changed = HandleFlowEvents(MergeWindow());
    }
    assert(std::all_of(flows_.begin(), flows_.end(),
                       [](const Flow& flow) { return flow.phase == Phase::kDone; }));
    for (double t : result_.member_completion_s) result_.completion_s = std::max(result_.completion_s, t);
    return std::move(result_);
  }

 private:
  enum class Phase { kWaiting, kActive, kDone };
  enum TimedKind { kStart = 0, kRelease = 1, kArrive = 2 };

  struct Flow {
    int edge = 0;
    int feeder = -1;           // flow index, or -1 when the parent is the lane source
    LaneShape shape;
    double window_cap = kInfinity;  // the window's and the per-chunk overhead's limit
    Phase phase = Phase::kWaiting;
    double sent = 0;           // bytes transmitted so far
    bool first_sent = false;   // the first chunk has been transmitted
    bool feeder_done = false;  // the feeder has transmitted its last byte
    bool released = false;     // ... and it has arrived: the last chunk may go
    bool held = false;         // at a limit that does not move: rate 0 until an event
    bool stepped = false;      // limited by whole chunks arrived instead of trailing its feeder
    double arrived = 0;        // stepped: bytes of the chunks its parent holds
    double next_boundary = 0;  // stepped: where the chunk it is transmitting ends
    double resume_at = 0;      // stepped: busy with the per-chunk work until then
    double debt_s = 0;         // seconds of sending already counted in `sent` (merged events)
    double rate = 0;
    double burst_rate = 0;     // what it could get now while transmitting (not held to its feeder)
  };

  struct Timed {
    double time;
    int kind;
    int flow;
    double bytes;  // kArrive: the parent now holds this much of the lane
    bool operator>(const Timed& other) const {
      return std::tie(time, kind, flow) > std::tie(other.time, other.kind, other.flow);
    }
  };

  // How far a flow may have sent. Store-and-forward: a chunk goes on only once it has fully
  // arrived. A stepped flow: the chunks that have arrived. A trailing flow: never the last
  // chunk before the feeder's last byte has arrived; everything else once the feeder is into
  // its last chunk; and before that the first chunk, then as far as trailing the feeder by the
  // time it takes to send one chunk itself (a flow faster than its feeder sends each chunk in
  // a burst, so it trails by less than a chunk).
  double Limit(const Flow& flow) const {
    if (flow.feeder < 0 || flow.released) return flow.shape.bytes;
    if (flow.stepped) return flow.arrived;
    const double before_last = flow.shape.bytes - flow.shape.last_chunk_bytes;
    const Flow& feeder = flows_[flow.feeder];
    if (flow.feeder_done || feeder.sent >= before_last) return before_last;
    const double lag_fraction = flow.burst_rate > feeder.rate ? feeder.rate / flow.burst_rate : 1.0;
    // A flow starts once its parent holds the first chunk, so that much is always there.
    return std::max(flow.shape.first_chunk_bytes, feeder.sent - lag_fraction * flow.shape.first_chunk_bytes);
  }
  // Whether flow f has chunk boundaries ahead to mark: a stepped flow with children (they may
  // forward each chunk once it has arrived) or a per-chunk pause, before its last chunk.
  bool Steps(int f) const {
    const Flow& flow = flows_[f];
    return flow.stepped && (overhead_s_ > 0 || fed_begin_[f] < fed_begin_[f + 1]) &&
           flow.next_boundary < flow.shape.bytes;
  }
  bool LimitIsFinal(const Flow& flow) const { return flow.feeder < 0 || flow.released; }
  // The limit moves while the feeder is transmitting.
  bool LimitMoves(const Flow& flow) const {
    if (LimitIsFinal(flow) || flow.feeder_done || flow.stepped) return false;
    const Flow& feeder = flows_[flow.feeder];
    return feeder.phase == Phase::kActive && !feeder.held &&
           feeder.sent < flow.shape.bytes - flow.shape.last_chunk_bytes;
  }
  // Events closer than this are handled together; never below what `now_` can resolve.
  double MergeWindow() const { return std::max(merge_fraction_, 1e-12) * std::max(1.0, now_); }
  static double Tolerance(const Flow& flow) { return 1e-9 * std::max(1.0, flow.shape.bytes); }
  // A trailing flow this close to a moving limit has caught up. Its limit shifts a little with
  // every change of rates (the lag is the feeder's rate over the flow's own); without this
  // margin a flow would chase each shift with an event of its own, thousands on many-lane
  // plans, for a thousandth of a chunk each.
  static double CatchUpTolerance(const Flow& flow) {
    return std::max(Tolerance(flow), 1e-3 * flow.shape.first_chunk_bytes);
  }

  void Schedule(double time, TimedKind kind, int flow, double bytes = 0) {
    timed_.push_back({time, kind, flow, bytes});
    std::push_heap(timed_.begin(), timed_.end(), std::greater<>());
  }

  void ApplyTimed() {
    std::pop_heap(timed_.begin(), timed_.end(), std::greater<>());
    const Timed event = timed_.back();
    timed_.pop_back();
    Flow& flow = flows_[event.flow];
    // A stepped flow that was idle starts its next chunk with the per-chunk work.
    const bool idle = flow.stepped && (flow.phase == Phase::kWaiting ||
                                       flow.sent >= Limit(flow) - Tolerance(flow));
    if (event.kind == kStart) {
      flow.phase = Phase::kActive;
    } else if (event.kind == kRelease) {
      flow.released = true;
    } else {
      flow.arrived = std::max(flow.arrived, event.bytes);
    }
    if (idle) flow.resume_at = event.time + overhead_s_;
  }

  // Max-min fair rates of the active flows; a flow that has caught up with a moving feeder is
  // held to the feeder's rate, one whose limit stands still gets rate 0.
  void SolveRates() {
    problem_.Clear(static_cast<int>(setup_.capacity_bytes_per_s.size()));
    problem_.capacity = setup_.capacity_bytes_per_s;
    // Limits depend on the rates of the last interval, so rates change only after the solve.
    for (size_t f = 0; f < flows_.size(); ++f) {
      Flow& flow = flows_[f];
      problem_index_[f] = -1;
      flow.held = false;
      if (flow.phase != Phase::kActive) continue;
      if (flow.resume_at > now_ + MergeWindow()) {
        flow.held = true;
        continue;
      }
      int feeder = -1;
      const double gap = Limit(flow) - flow.sent;
      if (gap <= Tolerance(flow) || (LimitMoves(flow) && gap <= CatchUpTolerance(flow))) {
        if (!LimitMoves(flow)) {
          flow.held = true;
          continue;
        }
        feeder = problem_index_[flow.feeder];
      }
      const SimEdge& edge = setup_.edges[flow.edge];
      problem_index_[f] = problem_.AddFlow(edge.resources, edge.weight, flow.window_cap, feeder);
    }
    const std::vector<double>& rates = solver_.Solve(problem_);
    load_.assign(problem_.capacity.size(), 0);
    for (size_t f = 0; f < flows_.size(); ++f) {
      flows_[f].rate = problem_index_[f] < 0 ? 0 : rates[problem_index_[f]];
      if (problem_index_[f] < 0) continue;
      for (int r : setup_.edges[flows_[f].edge].resources) load_[r] += flows_[f].rate;
    }
    // The burst rate is what the other flows leave on the flow's resources.
    for (Flow& flow : flows_) {
      if (flow.phase != Phase::kActive) continue;
      flow.burst_rate = kInfinity;
      for (int r : setup_.edges[flow.edge].resources) {
        if (problem_.capacity[r] == kInfinity) continue;
        flow.burst_rate = std::min(flow.burst_rate, problem_.capacity[r] - load_[r] + flow.rate);
      }
    }
  }

  double NextEventTime() const {
    double next = timed_.empty() ? kInfinity : timed_.front().time;
    for (size_t f = 0; f < flows_.size(); ++f) {
      const Flow& flow = flows_[f];
      if (flow.phase != Phase::kActive) continue;
      if (flow.resume_at > now_) next = std::min(next, flow.resume_at);
      if (flow.held) continue;
      const double free_at = now_ + flow.debt_s;  // it moves on once its debt is paid
      const double limit = Limit(flow);
      const double gap = limit - flow.sent;
      double to_limit = kInfinity;
      if (!LimitMoves(flow)) {
        to_limit = TimeToClose(gap, flow.rate);
      } else if (gap > CatchUpTolerance(flow)) {
        const double feeder_rate = flows_[flow.feeder].rate;
        to_limit = TimeToClose(gap, flow.rate == kInfinity ? kInfinity : flow.rate - feeder_rate);
      }
      next = std::min(next, free_at + to_limit);
      if (Steps(static_cast<int>(f))) {
        next = std::min(next, free_at + TimeToClose(flow.next_boundary - flow.sent, flow.rate));
      }
      if (!flow.first_sent) {
        // The first chunk is out when the flow has sent it and its limit has passed it.
        const double chunk = flow.shape.first_chunk_bytes;
        const double limit_passes =
            limit >= chunk ? 0 : LimitMoves(flow) ? TimeToClose(chunk - limit, flows_[flow.feeder].rate) : kInfinity;
        next = std::min(next, free_at + std::max(TimeToClose(chunk - flow.sent, flow.rate), limit_passes));
      }
    }
    return next;
  }

  // Moves every flow forward to `time` (feeders first, so limits are current).
  void Advance(double time) {
    const double dt = time - now_;
    for (Flow& flow : flows_) {
      if (flow.phase != Phase::kActive) continue;
      // Time owed for bytes counted early is spent first (held or not: they are on the wire).
      const double sending_s = std::max(0.0, dt - flow.debt_s);
      flow.debt_s = std::max(0.0, flow.debt_s - dt);
      if (flow.held) continue;
      const double moved = flow.rate == kInfinity ? kInfinity : flow.sent + flow.rate * sending_s;
      flow.sent = std::min(moved, Limit(flow));
    }
    now_ = time;
  }

  // Applies what happens within `window` of now: first chunks sent (the children may start
  // once they arrive), limits reached, flows ended (the children's last chunks are released
  // once the last byte arrives). A flow that reaches such a point within the window gets
  // there at once but owes the time those bytes take at its rate (debt_s: it moves on only
  // after that), and its children hear of it at the true time: merged events are handled
  // early, never sped up, so the error does not compound along the hops of a long path.
  // Returns whether any flow changed state.
  bool HandleFlowEvents(double window) {
    bool changed = false;
    for (size_t f = 0; f < flows_.size(); ++f) {
      Flow& flow = flows_[f];
      if (flow.phase != Phase::kActive || flow.held) continue;
      const double reach = flow.rate == kInfinity ? kInfinity : flow.rate * window;
      const double sent_before = flow.sent;
      const double free_at = now_ + flow.debt_s;
      // When the flow, sending from where it was, reaches `bytes`.
      auto reaches_at = [&](double bytes) {
        const double ahead = bytes - sent_before;
        return free_at + (ahead <= 0 || flow.rate == kInfinity ? 0.0 : ahead / flow.rate);
      };
      const double limit = Limit(flow);
      if (limit - flow.sent <= reach + Tolerance(flow) && flow.sent < limit) {
        changed |= limit - flow.sent > Tolerance(flow);
        flow.sent = limit;
      }
      const double delay_s = setup_.edges[flow.edge].delay_s;
      if (Steps(static_cast<int>(f)) && flow.sent + reach + Tolerance(flow) >= flow.next_boundary) {
        // A whole chunk is out: the children may forward it once it has arrived. The next
        // chunk's per-chunk work starts then if the parent holds that chunk, else on arrival.
        const double out_at = reaches_at(flow.next_boundary);
        flow.sent = std::max(flow.sent, flow.next_boundary);
        for (int i = fed_begin_[f]; i < fed_begin_[f + 1]; ++i) {
          Schedule(out_at + delay_s, kArrive, fed_[i], flow.next_boundary);
        }
        if (Limit(flow) > flow.next_boundary + Tolerance(flow)) flow.resume_at = out_at + overhead_s_;
        flow.next_boundary =
            std::min(flow.shape.bytes, flow.next_boundary + flow.shape.first_chunk_bytes);
        changed = true;
      }
      if (!flow.first_sent && flow.sent + reach + Tolerance(flow) >= flow.shape.first_chunk_bytes) {
        flow.first_sent = true;
        changed = true;
        const double out_at = reaches_at(flow.shape.first_chunk_bytes);
        for (int i = fed_begin_[f]; i < fed_begin_[f + 1]; ++i) Schedule(out_at + delay_s, kStart, fed_[i]);
      }
      const double done_at = reaches_at(flow.sent);
      flow.debt_s = done_at - now_;
      if (LimitIsFinal(flow) && flow.sent == flow.shape.bytes) {
        flow.phase = Phase::kDone;
        changed = true;
        double& done = result_.member_completion_s[setup_.edges[flow.edge].child];
        done = std::max(done, done_at + delay_s);
        for (int i = fed_begin_[f]; i < fed_begin_[f + 1]; ++i) {
          flows_[fed_[i]].feeder_done = true;
          Schedule(done_at + delay_s, kRelease, fed_[i]);
        }
      }
    }
    return changed;
  }

  const SimSetup& setup_;
  const double merge_fraction_;
  const double overhead_s_;
  SimResult result_;
  std::vector<Flow> flows_;         // one per lane edge with bytes, in edge order
  std::vector<int> fed_begin_, fed_;
  std::vector<Timed> timed_;        // min-heap of starts and releases
  double now_ = 0;
  FairShareProblem problem_;
  std::vector<int> problem_index_;  // per flow: its index in problem_, or -1
  std::vector<double> load_;        // per resource: the sum of the current rates
  MaxMinFairSolver solver_;
};

}  // namespace

SimResult SimulateFlowLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                            const SimOptions& options) {
  return FluidSimulation(plan, net, setup, options).Run();
}

}  // namespace gridcast
