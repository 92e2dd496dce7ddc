#include "collectives/simulator/simulator.h"

#include <algorithm>
#include <limits>
#include <string>

#include "collectives/simulator/chunk_simulator.h"
#include "collectives/simulator/flow_simulator.h"
#include "collectives/simulator/sim_setup.h"
#include "collectives/validate_plan.h"

namespace gridcast {

SimOptions DaemonPredictionOptions(size_t members) {
  SimOptions sim;
  sim.mode = SimMode::kFlowLevel;
  // What makes large chunks worth it: each chunk costs the daemon work on every hop.
  sim.per_message_overhead_s = kDaemonPerChunkOverheadS;
  // Hundreds of members make many nearly simultaneous events; merging those within 0.1% (1%
  // above 2,000 members) of the elapsed time keeps the search fast. Merged events are charged
  // their time (flow_simulator.h), so predictions stay within about 1% of the exact ones.
  if (members > 256) sim.flow_merge_fraction = 1e-3;
  if (members > 2000) sim.flow_merge_fraction = 1e-2;
  // Deep trees of many members step their lanes chunk by chunk otherwise (fewer than 16
  // chunks per hop), an event per chunk boundary on every flow: 6 s for multilane-sites on
  // 10,000 members at 1 MiB. Trailing is within 0.2% there and never fast (simulator.h).
  sim.flow_trail_short_lanes = members > 256;
  return sim;
}

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

namespace {

Status CheckStart(const Plan& plan, const SimStart& start) {
  const size_t members = plan.members.size();
  if (!start.absent.empty() && start.absent.size() != members) {
    return Status::InvalidArgument("a simulation's start marks " + std::to_string(start.absent.size()) +
                                   " members absent or not, for " + std::to_string(members));
  }
  if (start.lane_held.empty()) return Status::Ok();
  if (start.lane_held.size() != members) return Status::InvalidArgument("a simulation's start needs a row per member");
  for (const std::vector<uint64_t>& row : start.lane_held) {
    if (row.size() != plan.lanes.size()) return Status::InvalidArgument("a simulation's start needs a column per lane");
    for (size_t l = 0; l < row.size(); ++l) {
      if (row[l] > plan.lanes[l].ChunkCount()) {
        return Status::InvalidArgument("a simulation's start holds more of lane " + std::to_string(l) + " than it has");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<SimResult> SimulateFrom(const Plan& plan, const NetworkModel& net, const SimOptions& options,
                               const SimStart& start) {
  GRIDCAST_RETURN_IF_ERROR(CheckStart(plan, start));
  GRIDCAST_ASSIGN_OR_RETURN(SimSetup setup, BuildSimSetup(plan, net, options));
  return SimulateChunkLevelFrom(plan, net, setup, options, start);
}

Result<SimStart> SimulateUntil(const Plan& plan, const NetworkModel& net, const SimOptions& options,
                               const SimStart& start, double until_s) {
  GRIDCAST_RETURN_IF_ERROR(CheckStart(plan, start));
  GRIDCAST_ASSIGN_OR_RETURN(SimSetup setup, BuildSimSetup(plan, net, options));
  return ChunkLevelStateAt(plan, net, setup, options, start, until_s);
}

Result<double> PlanLowerBoundSeconds(const Plan& plan, const NetworkModel& net, const SimOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(SimSetup setup, BuildSimSetup(plan, net, options));
  std::vector<double> resource_bytes(setup.capacity_bytes_per_s.size(), 0);
  // Per edge: when the lane's first and last chunks can have reached its child at the earliest.
  std::vector<double> first_chunk_at(setup.edges.size(), 0), last_chunk_at(setup.edges.size(), 0);
  std::vector<double> lane_bytes(plan.lanes.size()), first_chunk_bytes(plan.lanes.size()),
      last_chunk_bytes(plan.lanes.size());
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    lane_bytes[l] = static_cast<double>(plan.LaneBytes(static_cast<int>(l)));
    first_chunk_bytes[l] = static_cast<double>(plan.ChunkSize(plan.lanes[l].FirstChunk()));
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
    // The edge sends nothing before its parent holds the first chunk, then the whole lane at
    // its rate at most: on a path whose slowest hop is not the first (a chain through a slow
    // uplink), that hop and the first chunk's way to it bound the lane, not the first hop.
    const double parent_has_first = edge.feeder < 0 ? 0 : first_chunk_at[edge.feeder];
    first_chunk_at[e] = parent_has_first + first_chunk_bytes[edge.lane] / rate + edge.delay_s;
    last_chunk_at[e] = parent_has_first + bytes / rate + edge.delay_s;
    if (edge.feeder >= 0) {
      last_chunk_at[e] = std::max(last_chunk_at[e], last_chunk_at[edge.feeder] + options.per_message_overhead_s +
                                                        last_chunk_bytes[edge.lane] / rate + edge.delay_s);
    }
    bound = std::max(bound, last_chunk_at[e]);
  }
  for (size_t r = 0; r < resource_bytes.size(); ++r) {
    bound = std::max(bound, resource_bytes[r] / setup.capacity_bytes_per_s[r]);
  }
  return bound;
}

Status SetPlannedLaneRates(Plan& plan, const NetworkModel& net) {
  GRIDCAST_ASSIGN_OR_RETURN(const SimSetup setup, BuildSimSetup(plan, net, SimOptions{}));
  std::vector<double> resource_bytes(setup.capacity_bytes_per_s.size(), 0);
  for (const SimEdge& edge : setup.edges) {
    for (int r : edge.resources) resource_bytes[r] += static_cast<double>(plan.LaneBytes(edge.lane));
  }
  double busiest_s = 0;
  for (size_t r = 0; r < resource_bytes.size(); ++r) {
    busiest_s = std::max(busiest_s, resource_bytes[r] / setup.capacity_bytes_per_s[r]);
  }
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    const double bytes = static_cast<double>(plan.LaneBytes(static_cast<int>(l)));
    plan.lanes[l].planned_bps = busiest_s > 0 ? std::min(8 * bytes / busiest_s, kMaxPlannedBps) : 0;
  }
  return Status::Ok();
}

}  // namespace gridcast
