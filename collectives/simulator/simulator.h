// SimulatePlan: predicts how long a Plan takes on a NetworkModel, with bandwidth sharing.
//
// The plan runs as the daemon's executor runs it: per lane, each member forwards each chunk,
// in chunk order, to its children in child order once the chunk has fully arrived; transfers
// share capacity max-min fairly (TCP-like). Resources are each node's NIC egress and ingress
// and each uplink in each direction; a transfer between switches crosses the uplinks of the
// switch-tree path, up then down. Every chunk on every hop also
// pays that path's one-way latency and a per-message overhead.
//
// Modelling choices (so results can be read correctly):
// * One lane edge is one TCP byte stream: its chunks are transmitted one after another, and at
//   most `window_chunks` are in flight (transmission started, arrival not yet reached). The
//   window is what hides latency; a small window on a long path caps the edge's throughput.
// * An edge with s parallel streams gets s shares of a shared bottleneck (TCP is fair per
//   connection); streams do not add capacity.
// * The overhead is the sender's per-chunk work (framing, hashing, store read and write): it
//   holds the edge before each chunk's bytes go, without using bandwidth (the other edges
//   of the node share it meanwhile). So it costs a lane chunks x overhead per hop of its
//   pipeline, against the fill of (chunk / rate) per hop that smaller chunks save: the
//   trade-off `auto` weighs when it picks the chunk size.
//
// Two engines: a chunk-level discrete-event reference (exact for this model;
// chunk_simulator.h) and a flow-level fluid approximation whose cost grows with the number of
// chunks only on the lanes it steps chunk by chunk (10,000 members, two lanes, 1024 chunks in
// 0.17 s; flow_simulator.h says which lanes and why). They agree within 3% on every plan of
// tests/unit/collectives/simulator/engine_agreement_test.cc (every registered broadcast
// planner, 2 to 33 members, flat, two-site and mixed-NIC networks, 1, 4 and mixed stream
// counts), so kAuto picks the engine by cost alone.
// Pure and deterministic; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "include/gridcast/result.h"

namespace gridcast {

// The daemon's per-chunk cost per hop, for SimOptions::per_message_overhead_s when predicting
// the daemon (auto and `gridcast simulate` use it). No per-chunk figure has been measured yet
// (docs/performance.md measures CPU per byte: about 4.4 CPU-s per GiB per receiver, mostly
// per-wakeup system time); 50 us is the order of a chunk's framing, syscalls and store write
// beside the per-byte hashing that the goodput does not model.
inline constexpr double kDaemonPerChunkOverheadS = 50e-6;

enum class SimMode {
  kAuto,        // chunk-level up to `max_chunk_transfers`, else flow-level
  kChunkLevel,  // every chunk on every hop is an event; cost grows with chunks x members
  kFlowLevel,   // every lane edge is one steady flow; cost grows with members only
};

struct SimOptions {
  // Fixed cost per chunk per hop (send + receive processing, hashing, store write), holding
  // the edge before the chunk's bytes. 0 reproduces the analytic formulas;
  // kDaemonPerChunkOverheadS predicts the daemon.
  double per_message_overhead_s = 0;

  // Fraction of a shaped rate that TCP delivers as payload (headers, ACKs). netgrid measures
  // about 0.955 on its htb-shaped links; 1.0 reproduces the analytic formulas.
  double goodput_factor = 1.0;

  // Chunks in flight per lane edge (per child). Larger windows hide more latency.
  int window_chunks = 4;

  SimMode mode = SimMode::kAuto;

  // kAuto's threshold on (chunks per lane x edges per lane, summed over lanes).
  uint64_t max_chunk_transfers = 50'000;

  // Flow level only: events closer than this fraction of the elapsed time are handled
  // together. Larger values run faster on networks where every member differs and shift
  // events by at most that fraction.
  double flow_merge_fraction = 1e-6;

  // Flow level only: in plans of one stream count, lanes of at least 16 chunks trail their
  // feeders (the fluid) however deep their paths, instead of being stepped chunk boundary by
  // chunk boundary when they carry fewer than 16 chunks per hop (flow_simulator.h). Stepping
  // is exact but costs an event per chunk boundary on every flow (multilane-sites on 10,000
  // members in 1 MiB chunks: 6 s against 0.3 s); the fluid stays within 0.2% of the chunk
  // level on such lanes, and never 1% fast (test EngineAgreement.TrailingShortLanesIsNeverFast;
  // lanes of one or two chunks were 2.3% fast, so those are still stepped). Plans mixing
  // stream counts are stepped regardless: the fluid was 25% fast on one.
  bool flow_trail_short_lanes = false;
};

struct SimResult {
  SimMode mode = SimMode::kChunkLevel;  // the engine that ran (never kAuto)
  double completion_s = 0;              // the last member holds the whole payload
  std::vector<double> member_completion_s;  // by member index; 0 for the broadcast source

  // Payload bytes carried by every link, by node index of the model and by switch index
  // (uplink directions; the root switch has no uplink and stays 0).
  std::vector<uint64_t> node_sent_bytes;
  std::vector<uint64_t> node_received_bytes;
  std::vector<uint64_t> uplink_up_bytes;    // child switch -> parent
  std::vector<uint64_t> uplink_down_bytes;  // parent -> child switch
};

// How planners that choose by prediction (auto, auto-alltoall) simulate a plan of `members`
// members for the daemon: flow level with kDaemonPerChunkOverheadS per chunk per hop, merging
// near-simultaneous events and trailing short lanes at hundreds of members to stay fast.
SimOptions DaemonPredictionOptions(size_t members);

// InvalidArgument if the plan does not validate on `net`, a rate on the plan's paths is not
// positive, or an option is out of range (overhead < 0, goodput factor not in (0, 1],
// window < 1, merge fraction not in [0, 1)).
Result<SimResult> SimulatePlan(const Plan& plan, const NetworkModel& net, const SimOptions& options);

// Where a simulation starts (SimulateFrom), as a plan being repaired sees it: how many of each
// lane's chunks each member holds, as a prefix of the lane's chunks in order, and the members
// that take no part any more (killed): no edge into or out of them carries anything.
struct SimStart {
  std::vector<std::vector<uint64_t>> lane_held;  // [member][lane]; empty: only the lane sources hold anything
  std::vector<bool> absent;                      // by member; empty: none
};

// SimulatePlan at the chunk level from `start`: each edge sends its child what the child
// lacks, in lane order. Times count from the start; members that held everything at the start,
// and absent ones, have completion 0 (absent ones are left out of completion_s).
// InvalidArgument as SimulatePlan, and for a start of the wrong shape or one holding more than
// a lane has; FailedPrecondition when a member not absent never holds everything (an absent
// member above it in a lane: the plan needs a patch first, plan_patch.h).
Result<SimResult> SimulateFrom(const Plan& plan, const NetworkModel& net, const SimOptions& options,
                               const SimStart& start);
// What every member holds `until_s` into SimulateFrom(plan, ..., start) (chunks whose last byte
// has arrived by then; chunks on their way do not count).
Result<SimStart> SimulateUntil(const Plan& plan, const NetworkModel& net, const SimOptions& options,
                               const SimStart& start, double until_s);

// A lower bound on SimulatePlan's completion_s in one pass over the plan's edges, for ruling
// candidates out before simulating them: the larger of (1) the busiest resource's bytes over
// its rate and (2) per lane, path and hop of the path, the lane's first chunk's way to the hop
// (transmission, delay), the lane's bytes over the hop, and its last chunk's store-and-forward
// over every further hop (transmission, delay, per-chunk work).
// The same errors as SimulatePlan.
Result<double> PlanLowerBoundSeconds(const Plan& plan, const NetworkModel& net, const SimOptions& options);

// Sets every lane's planned_bps to its bytes over the time the plan's busiest resource needs
// at the full rates of `net` (bound (1) above): the rates at which the lanes run side by side
// and end together, no resource above its rate. An empty payload leaves them 0. The same
// errors as SimulatePlan.
Status SetPlannedLaneRates(Plan& plan, const NetworkModel& net);

}  // namespace gridcast
