// SimSetup: a validated Plan laid over a NetworkModel, in the form both simulation engines
// (chunk_simulator.h, flow_simulator.h) read: lane edges with the resources they cross, their
// capacities in bytes per second, and per-hop delays. Internal to the simulator; plain data.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/simulator/simulator.h"
#include "include/gridcast/result.h"

namespace gridcast {

// One parent -> child edge of one lane.
struct SimEdge {
  int lane = 0;
  int parent = 0;            // member index
  int child = 0;             // member index
  int feeder = -1;           // the edge that brings the lane to `parent`; -1 at the lane source
  double weight = 1;         // parallel TCP streams: shares of a shared bottleneck
  double delay_s = 0;        // one-way path latency
  std::vector<int> resources;  // indices into SimSetup::capacity_bytes_per_s
};

// What a resource is, to report bytes per link.
struct SimResource {
  enum Kind { kNodeUp, kNodeDown, kUplinkUp, kUplinkDown } kind;
  int index;  // node index for kNodeUp/kNodeDown, switch index otherwise
};

struct SimSetup {
  int num_members = 0;
  std::vector<double> capacity_bytes_per_s;  // per resource used by the plan, goodput applied
  std::vector<SimResource> resource_info;    // per resource
  // Every lane's edges, lane by lane, each lane in breadth-first order from its source (so a
  // feeder comes before the edges it feeds) with a parent's children together in send order.
  std::vector<SimEdge> edges;
  std::vector<int> lane_edge_begin;          // lane l owns edges [begin[l], begin[l + 1])
};

// InvalidArgument for an invalid plan, a member that is no node of `net`, a rate on one of the
// plan's paths that is not positive, or options out of range.
Result<SimSetup> BuildSimSetup(const Plan& plan, const NetworkModel& net, const SimOptions& options);

// A SimResult with zero times and zero byte counts sized for `plan` on `net`.
SimResult EmptySimResult(const SimSetup& setup, const NetworkModel& net, SimMode mode);

// Adds `bytes` carried by `edge` to every link it crosses.
void CountEdgeBytes(const SimSetup& setup, const SimEdge& edge, uint64_t bytes, SimResult& result);

}  // namespace gridcast
