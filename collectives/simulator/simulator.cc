#include "collectives/simulator/simulator.h"

#include <algorithm>
#include <limits>

#include "collectives/simulator/chunk_simulator.h"
#include "collectives/simulator/flow_simulator.h"
#include "collectives/simulator/sim_setup.h"

namespace gridcast {

Result<SimResult> SimulatePlan(const Plan& plan, const NetworkModel& net, const SimOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(SimSetup setup, BuildSimSetup(plan, net, options));
  SimMode mode = options.mode;
  if (mode == SimMode::kAuto) {
    uint64_t transfers = 0;
    for (size_t l = 0; l < plan.lanes.size(); ++l) {
      transfers += plan.lanes[l].ChunkCount() * (setup.lane_edge_begin[l + 1] - setup.lane_edge_begin[l]);
    }
    mode = transfers <= options.max_chunk_transfers ? SimMode::kChunkLevel : SimMode::kFlowLevel;
  }
  if (mode == SimMode::kChunkLevel) return SimulateChunkLevel(plan, net, setup, options);
  return SimulateFlowLevel(plan, net, setup, options);
}

Result<double> PlanLowerBoundSeconds(const Plan& plan, const NetworkModel& net, const SimOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(SimSetup setup, BuildSimSetup(plan, net, options));
  std::vector<double> resource_bytes(setup.capacity_bytes_per_s.size(), 0);
  // Per edge: when the lane's last chunk can have reached its child at the earliest.
  std::vector<double> last_chunk_at(setup.edges.size(), 0);
  std::vector<double> lane_bytes(plan.lanes.size()), last_chunk_bytes(plan.lanes.size());
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    lane_bytes[l] = static_cast<double>(plan.LaneBytes(static_cast<int>(l)));
    last_chunk_bytes[l] = static_cast<double>(plan.ChunkSize(plan.lanes[l].LastChunk()));
  }
  double bound = 0;
  for (size_t e = 0; e < setup.edges.size(); ++e) {
    const SimEdge& edge = setup.edges[e];
    const double bytes = lane_bytes[edge.lane];
    double rate = std::numeric_limits<double>::infinity();
    for (int r : edge.resources) {
      resource_bytes[r] += bytes;
      rate = std::min(rate, setup.capacity_bytes_per_s[r]);
    }
    if (bytes == 0) continue;
    if (edge.feeder < 0) {
      last_chunk_at[e] = bytes / rate + edge.delay_s;
    } else {
      last_chunk_at[e] = last_chunk_at[edge.feeder] + options.per_message_overhead_s +
                         last_chunk_bytes[edge.lane] / rate + edge.delay_s;
    }
    bound = std::max(bound, last_chunk_at[e]);
  }
  for (size_t r = 0; r < resource_bytes.size(); ++r) {
    bound = std::max(bound, resource_bytes[r] / setup.capacity_bytes_per_s[r]);
  }
  return bound;
}

}  // namespace gridcast
