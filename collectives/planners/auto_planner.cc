#include "collectives/planners/auto_planner.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "collectives/bound.h"
#include "collectives/planners/planner_util.h"
#include "collectives/registry.h"
#include "collectives/simulator/simulator.h"
#include "common/units.h"

namespace gridcast {
namespace {

struct Candidate {
  std::string algorithm;
  uint64_t chunk_bytes = 0;
  int streams = 1;
  double time_s = 0;
  Plan plan;
  size_t order = 0;  // when it was made: ties go to the earlier
};

bool Faster(const Candidate& a, const Candidate& b) {
  return a.time_s < b.time_s || (a.time_s == b.time_s && a.order < b.order);
}

// "name 1MiB" plus " x4 streams" when more than one.
std::string Describe(const Candidate& c) {
  std::string text = c.algorithm + " " + FormatSize(c.chunk_bytes);
  if (c.streams > 1) text += " x" + std::to_string(c.streams) + " streams";
  return text;
}

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), s < 10 ? "%.2f s" : "%.1f s", s);
  return buffer;
}

bool HasUplinks(const NetworkModel& net) {
  return std::any_of(net.switches.begin(), net.switches.end(), [](const Switch& s) {
    return s.parent >= 0 && (s.uplink_up_bps < kUnshaped || s.uplink_down_bps < kUnshaped ||
                             s.latency_s > 0);
  });
}

// The stream count on every edge of the plan, or 0 when edges differ.
int UniformStreams(const Plan& plan) {
  int streams = 0;
  for (const Lane& lane : plan.lanes) {
    for (const Fanout& fanout : lane.fanouts) {
      for (size_t i = 0; i < fanout.children.size(); ++i) {
        const int s = lane.StreamsOn(fanout, i);
        if (streams != 0 && s != streams) return 0;
        streams = s;
      }
    }
  }
  return streams;
}

// Whether the simulator predicts a and b alike: the same lanes, or the same trees and chunks
// with one stream count on all edges of each. Streams only weigh an edge's share of a shared
// bottleneck, so equal weights everywhere give every edge the rate it has with one stream
// (the planners that ask every edge for the requested count, e.g. multilane-sites on sites
// without latency, would otherwise have each chunk size simulated again at 2 and 4 streams).
bool PredictedAlike(const Plan& a, const Plan& b) {
  if (a.chunk_bytes != b.chunk_bytes || a.members != b.members || a.lanes.size() != b.lanes.size()) return false;
  if (a.lanes == b.lanes) return true;
  if (UniformStreams(a) == 0 || UniformStreams(b) == 0) return false;
  for (size_t l = 0; l < a.lanes.size(); ++l) {
    const Lane& x = a.lanes[l];
    const Lane& y = b.lanes[l];
    if (x.source != y.source || x.chunks != y.chunks || x.fanouts.size() != y.fanouts.size()) return false;
    for (size_t f = 0; f < x.fanouts.size(); ++f) {
      if (x.fanouts[f].parent != y.fanouts[f].parent || x.fanouts[f].children != y.fanouts[f].children) return false;
    }
  }
  return true;
}

// Searches candidates, simulating only those that might beat the best so far: a candidate
// whose lower bound (PlanLowerBoundSeconds) is above the best prediction cannot win, and at
// scale most cannot (a chain of 10,000 members is ruled out by its pipeline alone, a flat
// tree by its source's upload), which spares most of the simulations.
class Search {
 public:
  Search(const NetworkModel& net, uint64_t payload_bytes, const PlanOptions& options)
      : net_(net), payload_bytes_(payload_bytes), options_(options) {}

  // Plans one candidate and keeps it, with its lower bound as a provisional time, unless the
  // planner cannot serve these inputs or the plan is not worth predicting.
  void Add(const Planner& planner, uint64_t chunk_bytes, int streams) {
    PlanOptions options = options_;
    options.chunk_bytes = chunk_bytes;
    options.streams = streams;
    Result<Plan> plan = planner.MakePlan(net_, payload_bytes_, options);
    if (!plan.ok()) return;
    Result<double> bound = PlanLowerBoundSeconds(*plan, net_, DaemonPredictionOptions(plan->members.size()));
    if (!bound.ok()) return;
    pending_.push_back(Candidate{planner.name(), chunk_bytes, streams, *bound, std::move(*plan), made_++});
  }

  // Simulates the pending candidates, most promising bound first, skipping those whose bound
  // is above the best prediction so far; returns every prediction made, fastest first.
  const std::vector<Candidate>& Run() {
    std::stable_sort(pending_.begin(), pending_.end(), Faster);
    for (Candidate& c : pending_) {
      if (!predicted_.empty() && c.time_s > predicted_.front().time_s) {
        ++ruled_out_;
        continue;
      }
      // Planners that agree on a network (multilane and multilane-sites under one switch)
      // make the same trees, and stream counts equal on every edge change no rate: predicted
      // once.
      auto twin = std::find_if(predicted_.begin(), predicted_.end(),
                               [&](const Candidate& p) { return PredictedAlike(p.plan, c.plan); });
      if (twin != predicted_.end()) {
        c.time_s = twin->time_s;
      } else {
        Result<SimResult> result = SimulatePlan(c.plan, net_, DaemonPredictionOptions(c.plan.members.size()));
        if (!result.ok()) continue;
        c.time_s = result->completion_s;
      }
      predicted_.push_back(std::move(c));
      std::stable_sort(predicted_.begin(), predicted_.end(), Faster);
    }
    pending_.clear();
    return predicted_;
  }

  // One candidate now: its prediction, or nullopt when it cannot serve or cannot win.
  std::optional<double> Predict(const Planner& planner, uint64_t chunk_bytes, int streams) {
    auto same = [&](const Candidate& c) {
      return c.algorithm == planner.name() && c.chunk_bytes == chunk_bytes && c.streams == streams;
    };
    auto seen = std::find_if(predicted_.begin(), predicted_.end(), same);
    if (seen == predicted_.end()) {
      Add(planner, chunk_bytes, streams);
      Run();
      seen = std::find_if(predicted_.begin(), predicted_.end(), same);
    }
    return seen == predicted_.end() ? std::nullopt : std::optional<double>(seen->time_s);
  }

  int ruled_out() const { return ruled_out_; }

 private:
  const NetworkModel& net_;
  const uint64_t payload_bytes_;
  const PlanOptions& options_;
  std::vector<Candidate> pending_;
  std::vector<Candidate> predicted_;
  size_t made_ = 0;
  int ruled_out_ = 0;
};

// A plan of many slow lanes (PlannerInfo::many_lanes) wins only by more than
// AutoPlanner::kNearTie: otherwise the fastest of the others predicted within that margin moves
// to the front. `tried` is fastest first.
void PreferOthersOnNearTies(std::vector<Candidate>& tried) {
  if (tried.empty() || !FindPlanner(tried.front().algorithm)->many_lanes) return;
  const double limit_s = tried.front().time_s * (1 + AutoPlanner::kNearTie);
  for (size_t i = 1; i < tried.size() && tried[i].time_s <= limit_s; ++i) {
    if (FindPlanner(tried[i].algorithm)->many_lanes) continue;
    std::rotate(tried.begin(), tried.begin() + static_cast<std::ptrdiff_t>(i),
                tried.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return;
  }
}

// Why the winner's chunk size: the winner's times at the next smaller and larger sizes tried,
// e.g. "; chunk 512KiB (50 us per chunk per hop against pipeline fill): 256KiB 86.2 s,
// 1MiB 86.3 s". Empty when only one size was tried.
std::string ChunkReason(const Candidate& best, const std::vector<Candidate>& tried,
                        std::vector<uint64_t> chunk_sizes) {
  std::sort(chunk_sizes.begin(), chunk_sizes.end());
  const auto at = std::find(chunk_sizes.begin(), chunk_sizes.end(), best.chunk_bytes);
  std::string neighbours;
  for (auto it : {at == chunk_sizes.begin() ? chunk_sizes.end() : at - 1, at + 1}) {
    if (it >= chunk_sizes.end()) continue;
    for (const Candidate& c : tried) {
      if (c.algorithm != best.algorithm || c.streams != best.streams || c.chunk_bytes != *it) continue;
      neighbours += (neighbours.empty() ? "" : ", ") + FormatSize(c.chunk_bytes) + " " + Seconds(c.time_s);
      break;
    }
  }
  if (neighbours.empty()) return "";
  char overhead[32];
  std::snprintf(overhead, sizeof(overhead), "%.0f us", kDaemonPerChunkOverheadS * 1e6);
  return "; chunk " + FormatSize(best.chunk_bytes) + " (" + overhead +
         " per chunk per hop against pipeline fill): " + neighbours;
}

// The chunk sizes auto compares: the options' first (the walk starts there), then, when it
// may choose, those of kChunkSizes that make sense for the payload.
// `default_chunk_bytes`: Planner::DefaultChunkBytes of the payload.
std::vector<uint64_t> ChunkSizesToTry(const PlanOptions& options, uint64_t payload_bytes, uint64_t default_chunk_bytes) {
  std::vector<uint64_t> chunk_sizes = {options.chunk_bytes};
  if (!options.choose_chunk_bytes) return chunk_sizes;
  const uint64_t smallest = std::min<uint64_t>(256 << 10, default_chunk_bytes);
  // Never more chunks than a member can hold, whatever the caller allowed.
  const uint64_t fewest_chunks = std::max(options.min_chunk_bytes, SmallestChunkBytes(payload_bytes, /*swarm=*/false));
  for (uint64_t size : AutoPlanner::kChunkSizes) {
    // Chunks beyond the payload all plan the same single chunk; keep the smallest of them.
    if (size != options.chunk_bytes && size >= smallest && size >= fewest_chunks &&
        (size <= payload_bytes || size == smallest)) {
      chunk_sizes.push_back(size);
    }
  }
  return chunk_sizes;
}

// The stream counts auto compares: the options' first; more only where uplinks are shared.
std::vector<int> StreamCountsToTry(const NetworkModel& net, const PlanOptions& options) {
  std::vector<int> stream_counts = {options.streams};
  if (!options.choose_streams || !HasUplinks(net)) return stream_counts;
  for (int streams : {1, 2, 4}) {
    if (streams != options.streams) stream_counts.push_back(streams);
  }
  return stream_counts;
}

// What auto records of its choice: the winner (tried.front()) against the bound, the best
// variants of two other planners, why its chunk size, and how many the bounds ruled out.
std::string Rationale(const std::vector<Candidate>& tried, double bound_s, const std::vector<uint64_t>& chunk_sizes,
                      int ruled_out) {
  const Candidate& best = tried.front();
  const double efficiency = best.time_s > 0 ? bound_s / best.time_s : 1.0;
  char efficiency_text[16];
  std::snprintf(efficiency_text, sizeof(efficiency_text), "%.2f", efficiency);
  std::string rationale = Describe(best) + ": " + Seconds(best.time_s) + " predicted, efficiency " + efficiency_text;
  std::vector<std::string> named = {best.algorithm};
  std::string next;
  for (const Candidate& c : tried) {
    if (named.size() == 3) break;
    if (std::find(named.begin(), named.end(), c.algorithm) != named.end()) continue;
    named.push_back(c.algorithm);
    next += (next.empty() ? "; next: " : ", ") + c.algorithm + " " + Seconds(c.time_s);
  }
  rationale += next + ChunkReason(best, tried, chunk_sizes);
  if (ruled_out > 0) rationale += "; " + std::to_string(ruled_out) + " ruled out by their lower bound";
  return rationale;
}

}  // namespace

Result<Plan> AutoPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                   const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  std::vector<std::unique_ptr<Planner>> planners;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind != PlannerKind::kBroadcast || info.name == name()) continue;
    // One lane per member costs the flow simulator time quadratic in the members (and the
    // planner memory to match: 1.7 GB at 10,000), and such plans pay twice the bandwidth term
    // of the multi-tree ones: beyond this size they are not worth predicting.
    if (info.lane_per_member && ranks.nodes.size() > kMaxLanePerMemberSize) continue;
    if (info.many_lanes && ranks.nodes.size() > kMaxManyLanesSize) continue;
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, MakePlanner(info.name));
    planners.push_back(std::move(planner));
  }

  Search search(net, payload_bytes, options);
  // Planners of many slow lanes (upload-packing) also at the per-size default chunk when auto
  // may choose it: they need small chunks and would not reach the finalists at 1 MiB.
  const uint64_t default_chunk_bytes = std::max(Planner::DefaultChunkBytes(payload_bytes), options.min_chunk_bytes);
  for (const std::unique_ptr<Planner>& planner : planners) {
    search.Add(*planner, options.chunk_bytes, options.streams);
    if (options.choose_chunk_bytes && default_chunk_bytes != options.chunk_bytes &&
        FindPlanner(planner->name())->many_lanes) {
      search.Add(*planner, default_chunk_bytes, options.streams);
    }
  }
  std::vector<std::string> leaders;  // the stage's best planners, fastest first, once each
  for (const Candidate& c : search.Run()) {
    if (std::find(leaders.begin(), leaders.end(), c.algorithm) == leaders.end()) leaders.push_back(c.algorithm);
  }
  if (leaders.empty()) return Status::InvalidArgument("no broadcast planner serves these inputs");

  std::vector<uint64_t> chunk_sizes =
      ChunkSizesToTry(options, payload_bytes, default_chunk_bytes);
  const std::vector<int> stream_counts = StreamCountsToTry(net, options);
  // Each finalist at each stream count walks the chunk sizes from the first guess: down while
  // that is faster, else up while that is faster. The time is unimodal in the chunk size
  // (pipeline fill against per-chunk work), so the walk finds the best size with a fraction of
  // the simulations.
  std::sort(chunk_sizes.begin(), chunk_sizes.end());
  const auto first_guess = static_cast<int>(
      std::find(chunk_sizes.begin(), chunk_sizes.end(), options.chunk_bytes) - chunk_sizes.begin());
  const int finalists = std::min<int>(kFinalists, static_cast<int>(leaders.size()));
  for (int f = 0; f < finalists; ++f) {
    const Planner& planner = **std::find_if(
        planners.begin(), planners.end(),
        [&](const std::unique_ptr<Planner>& p) { return p->name() == leaders[f]; });
    // More streams are tried only while they help this planner.
    double best_of_planner = std::numeric_limits<double>::infinity();
    for (int streams : stream_counts) {
      std::optional<double> at_guess = search.Predict(planner, options.chunk_bytes, streams);
      if (!at_guess) break;
      double best = *at_guess;
      for (int step : {-1, +1}) {
        bool improved = false;
        for (int i = first_guess + step; i >= 0 && i < static_cast<int>(chunk_sizes.size()); i += step) {
          std::optional<double> t = search.Predict(planner, chunk_sizes[i], streams);
          if (!t || *t >= best) break;
          best = *t;
          improved = true;
        }
        if (improved) break;  // smaller chunks helped: larger ones will not
      }
      if (best >= best_of_planner) break;
      best_of_planner = best;
    }
  }
  std::vector<Candidate> tried = search.Run();
  const int ruled_out = search.ruled_out();
  PreferOthersOnNearTies(tried);

  const double bound_s = BroadcastBoundSeconds(net, ranks.nodes[0], ranks.nodes, payload_bytes);
  std::string rationale = Rationale(tried, bound_s, chunk_sizes, ruled_out);
  Plan plan = std::move(tried.front().plan);
  plan.rationale = std::move(rationale);
  return plan;
}

}  // namespace gridcast
