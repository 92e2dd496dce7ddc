#include "collectives/planners/all_to_all_auto.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>

#include "collectives/bound.h"
#include "collectives/planners/planner_util.h"
#include "collectives/registry.h"
#include "collectives/simulator/simulator.h"

namespace gridcast {
namespace {

// Every all-to-all planner at its default parameter, and the block-based ones also at smaller
// blocks (small clusters have fewer members than the default block of 8).
std::vector<std::string> CandidateNames() {
  std::vector<std::string> names;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind != PlannerKind::kAllToAll || info.name == "auto-alltoall") continue;
    names.push_back(info.name);
    const std::string base(PlannerBaseName(info.name));
    if (base == "kprefix" || base == "kshift") {
      for (int k : {2, 4}) names.push_back(base + ":" + std::to_string(k));
    }
  }
  return names;
}

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), s < 10 ? "%.2f s" : "%.1f s", s);
  return buffer;
}

}  // namespace

std::vector<uint64_t> PartBytesByMember(const Plan& plan) {
  std::vector<uint64_t> bytes(plan.members.size(), 0);
  const uint64_t n = plan.NumChunks();
  for (const Lane& lane : plan.lanes) {
    for (const ChunkRange& range : lane.chunks) {
      for (uint64_t c = range.begin; c < range.end; c += range.step) {
        bytes[lane.source] += c + 1 == n ? plan.payload_bytes - c * plan.chunk_bytes : plan.chunk_bytes;
      }
    }
  }
  return bytes;
}

Result<Plan> AllToAllAutoPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                           const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  struct Candidate {
    std::string name;
    double time_s;  // the lower bound until simulated
    Plan plan;
  };
  std::vector<Candidate> candidates;
  Status first_error = Status::Ok();
  for (const std::string& name : CandidateNames()) {
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(name));
    Result<Plan> plan = planner->MakePlan(net, payload_bytes, options);
    if (!plan.ok()) {
      if (first_error.ok()) first_error = plan.status();
      continue;  // e.g. kprefix:8 on members that are not a power of two
    }
    Result<double> bound = PlanLowerBoundSeconds(*plan, net, DaemonPredictionOptions(plan->members.size()));
    if (bound.ok()) candidates.push_back({name, *bound, std::move(*plan)});
  }
  // Most promising first; a candidate whose lower bound is above the best prediction so far
  // cannot win and is not simulated (prefix-send on 64 members over a slow uplink takes most
  // of the search otherwise: 23 s for 1 GiB in 1 MiB chunks on four-sites-64).
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.time_s < b.time_s; });
  struct Predicted {
    std::string name;
    double time_s;
  };
  std::vector<Predicted> predicted;
  std::optional<Plan> best;
  double best_s = std::numeric_limits<double>::infinity();
  int ruled_out = 0;
  for (Candidate& c : candidates) {
    if (c.time_s > best_s) {
      ++ruled_out;
      continue;
    }
    Result<SimResult> sim = SimulatePlan(c.plan, net, DaemonPredictionOptions(c.plan.members.size()));
    if (!sim.ok()) continue;
    predicted.push_back({c.name, sim->completion_s});
    if (sim->completion_s < best_s) {
      best_s = sim->completion_s;
      best = std::move(c.plan);
    }
  }
  if (!best) return first_error.ok() ? Status::InvalidArgument("no all-to-all planner serves these inputs") : first_error;
  std::stable_sort(predicted.begin(), predicted.end(),
                   [](const Predicted& a, const Predicted& b) { return a.time_s < b.time_s; });
  const std::vector<uint64_t> part_bytes = PartBytesByMember(*best);
  std::vector<int> part_nodes;
  for (int node : ranks.nodes) part_nodes.push_back(node);
  const double bound_s = AllgatherBoundSeconds(net, part_nodes, part_bytes);
  char efficiency[16];
  std::snprintf(efficiency, sizeof(efficiency), "%.2f", best_s > 0 ? bound_s / best_s : 1.0);
  std::string rationale = best->algorithm + ": " + Seconds(best_s) + " predicted, efficiency " + efficiency;
  for (size_t i = 1; i < predicted.size() && i < 3; ++i) {
    rationale += (i == 1 ? "; next: " : ", ") + predicted[i].name + " " + Seconds(predicted[i].time_s);
  }
  if (ruled_out > 0) rationale += "; " + std::to_string(ruled_out) + " ruled out by their lower bound";
  best->rationale = rationale;
  return std::move(*best);
}

}  // namespace gridcast
