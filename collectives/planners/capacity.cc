#include "collectives/planners/capacity.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <tuple>

#include "collectives/planners/planner_util.h"
#include "collectives/planners/sites.h"
#include "common/units.h"

namespace gridcast {
namespace {

struct Member {
  double up_bps = kUnshaped;
  double down_bps = kUnshaped;
  bool source = false;
};

// Children a site needs per lane: every member but the lane's entry, plus one entry per fed site.
int64_t NeedPerLane(const Site& site) {
  return static_cast<int64_t>(site.members.size()) - 1 + static_cast<int64_t>(site.fed.size());
}

// Children `m` can serve over all `lanes` lanes at `lane_bps` each, capped at `cap`.
int64_t Slots(const Member& m, double lane_bps, int lanes, int64_t cap) {
  // A receiver that cannot take every lane at full rate would slow all of its subtree.
  if (!m.source && m.down_bps * (1 + kRoundingSlack) < lanes * lane_bps) return 0;
  if (m.up_bps >= kFastestBps) return cap;
  const double slots = std::floor(m.up_bps / lane_bps * (1 + kRoundingSlack));
  return std::min<int64_t>(cap, static_cast<int64_t>(slots));
}

bool SiteCarries(const Site& site, const std::vector<Member>& members, double lane_bps,
                 int lanes) {
  const int64_t need = NeedPerLane(site) * lanes;
  int64_t total = 0;
  for (int r : site.members) {
    const int64_t slots = Slots(members[r], lane_bps, lanes, need);
    // The source roots every lane, so it needs a child in each.
    if (members[r].source && slots < lanes) return false;
    total += slots;
  }
  return total >= need;
}

// The largest per-lane rate the site's slots can carry (bisection on a log scale).
double SiteLaneBps(const Site& site, const std::vector<Member>& members, int lanes) {
  if (NeedPerLane(site) == 0 || SiteCarries(site, members, kFastestBps, lanes)) return kUnshaped;
  double lo = std::log(kSlowestBps);
  double hi = std::log(kFastestBps);
  for (int i = 0; i < 64; ++i) {
    const double mid = (lo + hi) / 2;
    if (SiteCarries(site, members, std::exp(mid), lanes)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return std::exp(lo);
}

// Hands out each lane's children slots: lane_slots[lane][i] for site member i. Slots go one at
// a time, lanes in turn, to the member with the most left (then the one served longest ago),
// so every lane gets a similar mix of fast members and slow ones stay leaves.
std::vector<std::vector<int64_t>> SplitSlots(const Site& site, const std::vector<Member>& members,
                                             double lane_bps, int lanes) {
  const int size = static_cast<int>(site.members.size());
  const int64_t need = NeedPerLane(site);
  std::vector<std::vector<int64_t>> lane_slots(lanes, std::vector<int64_t>(size, 0));
  if (need == 0) return lane_slots;
  // (slots left, -last use, -position): the largest is served next.
  using Key = std::tuple<int64_t, int64_t, int>;
  std::priority_queue<Key> ready;
  std::vector<int64_t> left(size);
  int64_t handed = 0;
  for (int i = 0; i < size; ++i) {
    left[i] = Slots(members[site.members[i]], lane_bps, lanes, need * lanes);
    if (members[site.members[i]].source) {
      for (int l = 0; l < lanes; ++l) lane_slots[l][i] = 1;
      left[i] -= lanes;
      handed = 1;
    }
    if (left[i] > 0) ready.push({left[i], 0, -i});
  }
  int64_t use = 0;
  for (int64_t round = handed; round < need; ++round) {
    for (int l = 0; l < lanes; ++l) {
      // SiteCarries guarantees enough slots in total.
      auto [slots, last_use, position] = ready.top();
      ready.pop();
      lane_slots[l][-position] += 1;
      if (slots > 1) ready.push({slots - 1, --use, position});
    }
  }
  return lane_slots;
}

struct LaneTrees {
  std::vector<Tree> trees;   // per lane, over ranks
  int depth = 0;             // deepest member over all lanes
};

LaneTrees BuildTrees(const std::vector<Site>& sites, const std::vector<Member>& members,
                     const std::vector<double>& site_lane_bps, int lanes) {
  const int p = static_cast<int>(members.size());
  std::vector<std::vector<std::vector<int64_t>>> slots;  // [site][lane][member position]
  std::vector<std::vector<int>> entry(sites.size(), std::vector<int>(lanes));  // ranks
  for (size_t s = 0; s < sites.size(); ++s) {
    slots.push_back(SplitSlots(sites[s], members, site_lane_bps[s], lanes));
    for (int l = 0; l < lanes; ++l) {
      // The source's site is entered at the source; others at the member with the most slots.
      const std::vector<int64_t>& lane_slots = slots[s][l];
      const size_t best = sites[s].feeder < 0
                              ? 0
                              : std::max_element(lane_slots.begin(), lane_slots.end()) -
                                    lane_slots.begin();
      entry[s][l] = sites[s].members[best];
    }
  }
  LaneTrees result;
  for (int l = 0; l < lanes; ++l) {
    Tree tree(p);
    std::vector<int> depth(p, 0);
    for (size_t s = 0; s < sites.size(); ++s) {
      const Site& site = sites[s];
      const std::vector<int64_t>& lane_slots = slots[s][l];
      const int root = entry[s][l];
      // Interior members (most children first), then the fed sites' entries, then leaves.
      std::vector<int> interior;
      std::vector<int> leaves;
      for (size_t i = 0; i < site.members.size(); ++i) {
        if (site.members[i] == root) continue;
        (lane_slots[i] > 0 ? interior : leaves).push_back(static_cast<int>(i));
      }
      std::stable_sort(interior.begin(), interior.end(),
                       [&](int a, int b) { return lane_slots[a] > lane_slots[b]; });
      std::vector<int> order;  // ranks
      std::vector<int64_t> order_slots;
      for (int i : interior) {
        order.push_back(site.members[i]);
        order_slots.push_back(lane_slots[i]);
      }
      for (int t : site.fed) {
        order.push_back(entry[t][l]);
        order_slots.push_back(0);
      }
      for (int i : leaves) {
        order.push_back(site.members[i]);
        order_slots.push_back(0);
      }
      const size_t root_position =
          std::find(site.members.begin(), site.members.end(), root) - site.members.begin();
      std::deque<std::pair<int, int64_t>> open = {{root, lane_slots[root_position]}};
      for (size_t j = 0; j < order.size(); ++j) {
        while (open.front().second == 0) open.pop_front();
        const int parent = open.front().first;
        open.front().second -= 1;
        tree[parent].push_back(order[j]);
        depth[order[j]] = depth[parent] + 1;
        result.depth = std::max(result.depth, depth[order[j]]);
        if (order_slots[j] > 0) open.push_back({order[j], order_slots[j]});
      }
    }
    result.trees.push_back(std::move(tree));
  }
  return result;
}

}  // namespace

Result<Plan> CapacityPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                       const PlanOptions& options) const {
  GRIDCAST_RETURN_IF_ERROR(CheckSwitchTree(net));
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  std::vector<Member> members;
  for (int node : ranks.nodes) {
    members.push_back({net.nodes[node].up_bps, net.nodes[node].down_bps});
  }
  members[0].source = true;
  const std::vector<Site> sites = OrderSites(net, ranks);

  const double payload_bits = static_cast<double>(payload_bytes) * 8;
  const double chunk_bits = static_cast<double>(std::min(payload_bytes, plan.chunk_bytes)) * 8;
  double best_s = kUnshaped;
  double best_lane_bps = kUnshaped;
  LaneTrees best;
  const int max_lanes = LanesWithChunks(plan.NumChunks(), kMaxLanes);
  for (int lanes = 1; lanes <= max_lanes; ++lanes) {
    // Per site: the rate its own slots carry, and the rate a lane actually arrives with (no
    // faster than its feeder, the uplinks on the way, or its receivers' downloads allow).
    std::vector<double> site_lane_bps;
    std::vector<double> effective_bps;
    for (const Site& site : sites) {
      site_lane_bps.push_back(SiteLaneBps(site, members, lanes));
      double bps = site_lane_bps.back();
      if (site.feeder < 0) {
        bps = std::min(bps, members[0].up_bps / lanes);
      } else {
        bps = std::min({bps, effective_bps[site.feeder], site.route_bps / lanes});
      }
      for (int r : site.members) {
        if (!members[r].source) bps = std::min(bps, members[r].down_bps / lanes);
      }
      effective_bps.push_back(bps);
    }
    const double lane_bps = std::min(
        kFastestBps, *std::min_element(effective_bps.begin(), effective_bps.end()));
    LaneTrees trees = BuildTrees(sites, members, site_lane_bps, lanes);
    const double estimate_s =
        payload_bits / (lanes * lane_bps) + trees.depth * chunk_bits / lane_bps;
    if (estimate_s < best_s * (1 - kRoundingSlack)) {
      best_s = estimate_s;
      best_lane_bps = lane_bps;
      best = std::move(trees);
    }
  }
  const int lanes = static_cast<int>(best.trees.size());
  for (int l = 0; l < lanes; ++l) {
    plan.lanes.push_back(TreeLane(0, InterleavedChunks(plan.NumChunks(), lanes, l),
                                  std::move(best.trees[l]), options.streams));
  }
  plan.rationale = std::to_string(lanes) + (lanes == 1 ? " lane" : " lanes") + " of " +
                   FormatRate(best_lane_bps) + ", tree depth " + std::to_string(best.depth);
  return plan;
}

}  // namespace gridcast
