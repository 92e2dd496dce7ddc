// SimulatePlan: predicts how long a Plan takes on a NetworkModel, with bandwidth sharing.
//
// The plan runs as the daemon's executor runs it: per lane, each member forwards each chunk,
// in chunk order, to its children in child order once the chunk has fully arrived; transfers
// share capacity max-min fairly (TCP-like). Resources are each node's NIC egress and ingress
// and each uplink in each direction; a transfer between switches crosses the uplinks of the
// switch-tree path, up then down. Every chunk on every hop also
// pays that path's one-way latency plus a per-message overhead.
//
// Modelling choices (so results can be read correctly):
// * One lane edge is one TCP byte stream: its chunks are transmitted one after another, and at
//   most `window_chunks` are in flight (transmission started, arrival not yet reached). The
//   window is what hides latency; a small window on a long path caps the edge's throughput.
// * An edge with s parallel streams gets s shares of a shared bottleneck (TCP is fair per
//   connection); streams do not add capacity.
// * The overhead delays each chunk's arrival like latency; it does not occupy the link.
//
// Two engines: a chunk-level discrete-event reference (exact for this model;
// chunk_simulator.h) and a flow-level fluid approximation whose cost does not grow with the
// number of chunks (10,000 members, two lanes, 1024 chunks in 0.25 s; flow_simulator.h, which
// also says where it is inaccurate). Pure and deterministic; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "common/result.h"

namespace gridcast {

enum class SimMode {
  kAuto,        // chunk-level up to `max_chunk_transfers` (4x that for plans of short lanes
                // over long paths, which the flow level overestimates), else flow-level
  kChunkLevel,  // every chunk on every hop is an event; cost grows with chunks x members
  kFlowLevel,   // every lane edge is one steady flow; cost grows with members only
};

struct SimOptions {
  // Fixed cost per chunk per hop (send + receive processing, hashing, store write).
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

// InvalidArgument if the plan does not validate on `net`, a rate on the plan's paths is not
// positive, or an option is out of range (overhead < 0, goodput factor not in (0, 1],
// window < 1, merge fraction not in [0, 1)).
Result<SimResult> SimulatePlan(const Plan& plan, const NetworkModel& net, const SimOptions& options);

}  // namespace gridcast
