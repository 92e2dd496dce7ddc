#include "collectives/simulator/flow_simulator.h"

#include <algorithm>
#include <limits>

#include "collectives/simulator/max_min_fair.h"

namespace gridcast {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Seconds to move `bytes` at `rate`; infinite rates take no time.
double TimeAt(double bytes, double rate) { return rate == kInfinity ? 0 : bytes / rate; }

uint64_t FirstChunkBytes(const Plan& plan, const Lane& lane) {
  uint64_t first = std::numeric_limits<uint64_t>::max();
  for (const ChunkRange& range : lane.chunks) {
    if (range.Count() > 0) first = std::min(first, range.begin);
  }
  return plan.ChunkSize(first);
}

}  // namespace

SimResult SimulateFlowLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                            const SimOptions& options) {
  SimResult result = EmptySimResult(setup, net, SimMode::kFlowLevel);
  const int num_edges = static_cast<int>(setup.edges.size());
  const int num_lanes = static_cast<int>(plan.lanes.size());
  std::vector<double> lane_bytes(num_lanes), first_chunk_bytes(num_lanes);
  for (int l = 0; l < num_lanes; ++l) {
    lane_bytes[l] = static_cast<double>(plan.LaneBytes(l));
    first_chunk_bytes[l] = lane_bytes[l] > 0 ? static_cast<double>(FirstChunkBytes(plan, plan.lanes[l])) : 0;
  }

  // One flow per edge of a lane that carries bytes; flows keep edge order, so feeders come first.
  FairShareProblem problem;
  problem.Clear(static_cast<int>(setup.capacity_bytes_per_s.size()));
  problem.capacity = setup.capacity_bytes_per_s;
  std::vector<int> flow_of(num_edges, -1);
  for (int e = 0; e < num_edges; ++e) {
    const SimEdge& edge = setup.edges[e];
    if (lane_bytes[edge.lane] == 0) continue;
    double fastest = kInfinity;
    for (int r : edge.resources) fastest = std::min(fastest, setup.capacity_bytes_per_s[r]);
    // At most `window` chunks per (transmission + delay) even at the fastest rate.
    const double chunk = first_chunk_bytes[edge.lane];
    const double cycle_s = TimeAt(chunk, fastest) + edge.delay_s;
    const double window_cap = cycle_s == 0 ? kInfinity : options.window_chunks * chunk / cycle_s;
    flow_of[e] = problem.AddFlow(edge.resources, edge.weight, window_cap,
                                 edge.feeder >= 0 ? flow_of[edge.feeder] : -1);
  }
  MaxMinFairSolver solver;
  const std::vector<double>& throughput = solver.Solve(problem);

  std::vector<double> load(problem.capacity.size(), 0);
  for (int e = 0; e < num_edges; ++e) {
    if (flow_of[e] < 0) continue;
    for (int r : setup.edges[e].resources) load[r] += throughput[flow_of[e]];
  }

  // Per edge: when the first chunk reaches the child, and the slowest rate on the way.
  std::vector<double> fill_s(num_edges, 0), path_rate(num_edges, kInfinity);
  for (int e = 0; e < num_edges; ++e) {
    if (flow_of[e] < 0) continue;
    const SimEdge& edge = setup.edges[e];
    const double rate = throughput[flow_of[e]];
    double burst = kInfinity;
    for (int r : edge.resources) {
      if (problem.capacity[r] == kInfinity) continue;
      burst = std::min(burst, std::max(rate, problem.capacity[r] - load[r] + rate));
    }
    const double chunk = first_chunk_bytes[edge.lane];
    fill_s[e] = (edge.feeder >= 0 ? fill_s[edge.feeder] : 0) + TimeAt(chunk, burst) + edge.delay_s;
    path_rate[e] = std::min(rate, edge.feeder >= 0 ? path_rate[edge.feeder] : kInfinity);
    double& done = result.member_completion_s[edge.child];
    done = std::max(done, fill_s[e] + TimeAt(lane_bytes[edge.lane] - chunk, path_rate[e]));
    result.completion_s = std::max(result.completion_s, done);
    CountEdgeBytes(setup, edge, static_cast<uint64_t>(lane_bytes[edge.lane]), result);
  }
  return result;
}

}  // namespace gridcast
