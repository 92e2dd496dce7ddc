#include "collectives/planners/sites.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace gridcast {

std::vector<Site> OrderSites(const NetworkModel& net, const Ranks& ranks) {
  const int num_switches = static_cast<int>(net.switches.size());
  std::vector<std::vector<int>> members_of(num_switches);
  for (int r = 0; r < ranks.size(); ++r) {
    members_of[net.nodes[ranks.nodes[r]].switch_index].push_back(r);
  }
  std::vector<std::vector<int>> adjacent(num_switches);
  for (int s = 1; s < num_switches; ++s) {
    adjacent[s].push_back(net.switches[s].parent);
    adjacent[net.switches[s].parent].push_back(s);
  }
  const int source_switch = net.nodes[ranks.nodes[0]].switch_index;
  std::vector<bool> seen(num_switches, false);
  std::deque<int> queue = {source_switch};
  seen[source_switch] = true;
  std::vector<Site> sites;
  while (!queue.empty()) {
    const int s = queue.front();
    queue.pop_front();
    for (int t : adjacent[s]) {
      if (!seen[t]) {
        seen[t] = true;
        queue.push_back(t);
      }
    }
    if (members_of[s].empty()) continue;
    Site site;
    site.switch_index = s;
    site.members = std::move(members_of[s]);
    size_t best_hops = std::numeric_limits<size_t>::max();
    for (int f = 0; f < static_cast<int>(sites.size()); ++f) {
      const std::vector<UplinkHop> route = SwitchRoute(net, sites[f].switch_index, s);
      double bps = kUnshaped;
      for (const UplinkHop& hop : route) bps = std::min(bps, hop.rate_bps);
      if (route.size() < best_hops || (route.size() == best_hops && bps > site.route_bps)) {
        best_hops = route.size();
        site.feeder = f;
        site.route_bps = bps;
      }
    }
    if (site.feeder >= 0) sites[site.feeder].fed.push_back(static_cast<int>(sites.size()));
    sites.push_back(std::move(site));
  }
  return sites;
}

}  // namespace gridcast
