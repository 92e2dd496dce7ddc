#include "collectives/planners/multilane_sites.h"

#include <algorithm>
#include <cmath>

#include <algorithm>
#include <cassert>
#include <iterator>

#include "collectives/planners/multilane.h"
#include "collectives/planners/planner_util.h"

namespace gridcast {
namespace {

double BottleneckBps(const NetworkModel& net, int from, int to) {
  double rate = kUnshaped;
  for (const UplinkHop& hop : SwitchRoute(net, from, to)) rate = std::min(rate, hop.rate_bps);
  return rate;
}

// Takes the last free uplink of tree `lane` (the paper's last leaf, A_{2n-1} or B_{2n-1}), or,
// when that tree has none left, the last one of the other tree.
int TakeFreeUplink(std::vector<FreeUplink>& free, int lane) {
  // Every site leaves exactly two free slots: its 2N slots minus the 2N - 2 edges it sends
  // (each of its N members has one parent per lane, two of them outside), or node 0's two.
  assert(!free.empty());
  auto it = std::find_if(free.rbegin(), free.rend(),
                         [lane](const FreeUplink& f) { return f.lane == lane; });
  if (it == free.rend()) it = free.rbegin();
  const int member = it->member;
  free.erase(std::next(it).base());
  return member;
}

}  // namespace

std::vector<int> MultiLaneSitesPlanner::SiteOrder(const NetworkModel& net,
                                                  const std::vector<int>& switch_of_rank) {
  std::vector<int> left = switch_of_rank;
  std::sort(left.begin(), left.end());
  left.erase(std::unique(left.begin(), left.end()), left.end());
  std::vector<int> order = {switch_of_rank[0]};
  left.erase(std::find(left.begin(), left.end(), order[0]));
  while (!left.empty()) {
    // `left` is sorted, so the strict > keeps the lowest switch index among equal rates.
    auto best = left.begin();
    double best_bps = -1;
    for (auto it = left.begin(); it != left.end(); ++it) {
      const double bps = BottleneckBps(net, order.back(), *it);
      if (bps > best_bps) {
        best_bps = bps;
        best = it;
      }
    }
    order.push_back(*best);
    left.erase(best);
  }
  return order;
}

int MultiLaneSitesPlanner::WanStreams(const NetworkModel& net, int from_switch, int to_switch,
                                      int requested) {
  double rate_bps = kUnshaped;
  double one_way_s = 0;
  for (const UplinkHop& hop : SwitchRoute(net, from_switch, to_switch)) {
    rate_bps = std::min(rate_bps, hop.rate_bps);
    one_way_s += hop.latency_s;
  }
  if (!std::isfinite(rate_bps)) return requested;
  // Enough streams that their windows together cover the path's bandwidth-delay product.
  const double bdp_bytes = rate_bps / 8 * 2 * one_way_s;
  const int needed = static_cast<int>(std::ceil(bdp_bytes / kStreamWindowBytes));
  return std::clamp(needed, requested, std::max(requested, kMaxWanStreams));
}

Result<Plan> MultiLaneSitesPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                             const PlanOptions& options) const {
  GRIDCAST_RETURN_IF_ERROR(CheckSwitchTree(net));
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartTwoLanePlan(net, ranks, payload_bytes, options, name());
  std::vector<int> switch_of_rank;
  for (int node : ranks.nodes) switch_of_rank.push_back(net.nodes[node].switch_index);

  // Node 0 alone in its site feeds the next site itself, from both of its uplinks.
  std::vector<FreeUplink> free = {{0, kLaneA}, {0, kLaneB}};
  for (int site : SiteOrder(net, switch_of_rank)) {
    std::vector<int> nodes;
    for (int r = 1; r < ranks.size(); ++r) {
      if (switch_of_rank[r] == site) nodes.push_back(r);
    }
    if (nodes.empty()) continue;  // the source's site when the source is alone there
    const bool source_site = site == switch_of_rank[0];
    const int feed_a = source_site ? 0 : TakeFreeUplink(free, kLaneA);
    const int feed_b = source_site ? 0 : TakeFreeUplink(free, kLaneB);
    const int wan_streams =
        source_site ? 0 : WanStreams(net, switch_of_rank[feed_a], site, options.streams);
    free = AddMultiLaneSite(nodes, feed_a, feed_b, wan_streams,
                            plan.lanes[kLaneA], plan.lanes[kLaneB]);
  }
  return plan;
}

}  // namespace gridcast
