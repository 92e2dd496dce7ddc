#include "deploy/p2p_schedule.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace gridcast {
namespace {

// A directed link: a node's NIC (up or down) or a switch's uplink (up or down).
enum class LinkKind { kNicUp, kNicDown, kUplinkUp, kUplinkDown };
using Link = std::pair<LinkKind, int>;

struct Route {
  std::vector<std::pair<Link, double>> links;  // with capacities
  double rate_bps = kUnshaped;
};

Route RouteOf(const NetworkModel& model, int from, int to) {
  Route route;
  auto add = [&](Link link, double capacity_bps) {
    route.links.push_back({link, capacity_bps});
    route.rate_bps = std::min(route.rate_bps, capacity_bps);
  };
  const Node& sender = model.nodes[static_cast<size_t>(from)];
  const Node& receiver = model.nodes[static_cast<size_t>(to)];
  add({LinkKind::kNicUp, from}, sender.up_bps);
  add({LinkKind::kNicDown, to}, receiver.down_bps);
  // Up from the sender's switch until a switch above the receiver's too, then down.
  for (int s : model.PathToRoot(sender.switch_index)) {
    if (model.IsInSubtree(receiver.switch_index, s)) break;
    add({LinkKind::kUplinkUp, s}, model.switches[static_cast<size_t>(s)].uplink_up_bps);
  }
  for (int s : model.PathToRoot(receiver.switch_index)) {
    if (model.IsInSubtree(sender.switch_index, s)) break;
    add({LinkKind::kUplinkDown, s}, model.switches[static_cast<size_t>(s)].uplink_down_bps);
  }
  return route;
}

}  // namespace

std::vector<std::vector<P2pPair>> ScheduleP2pRounds(const NetworkModel& model) {
  const int n = static_cast<int>(model.nodes.size());
  struct Pending {
    P2pPair pair;
    Route route;
    int shift;
  };
  std::vector<Pending> pending;
  for (int d = 1; d < n; ++d) {
    for (int i = 0; i < n; ++i) {
      const int j = (i + d) % n;
      Route route = RouteOf(model, i, j);
      pending.push_back({{i, j, route.rate_bps}, std::move(route), d});
    }
  }
  // Slowest first; ties keep the shift order (stable).
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Pending& a, const Pending& b) { return a.pair.rate_bps < b.pair.rate_bps; });
  std::vector<std::vector<P2pPair>> rounds;
  std::vector<bool> done(pending.size(), false);
  size_t left = pending.size();
  while (left > 0) {
    std::map<Link, double> load_bps;
    std::vector<P2pPair> round;
    for (size_t p = 0; p < pending.size(); ++p) {
      if (done[p]) continue;
      const Route& route = pending[p].route;
      // Unshaped links never limit.
      const bool fits = std::all_of(route.links.begin(), route.links.end(), [&](const auto& link) {
        const auto& [id, capacity_bps] = link;
        if (std::isinf(capacity_bps)) return true;
        return load_bps[id] + route.rate_bps <= capacity_bps * (1 + 1e-9);
      });
      if (!fits) continue;
      for (const auto& [id, capacity_bps] : route.links) load_bps[id] += route.rate_bps;
      round.push_back(pending[p].pair);
      done[p] = true;
      --left;
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}

}  // namespace gridcast
