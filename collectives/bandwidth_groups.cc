#include "collectives/bandwidth_groups.h"

#include <algorithm>
#include <numeric>

namespace gridcast {

std::vector<int> SwitchBandwidthGroups(const NetworkModel& net) {
  const int s = static_cast<int>(net.switches.size());
  // Aggregate NIC rates under each switch, in each direction.
  std::vector<double> up_below(s, 0), down_below(s, 0);
  for (const Node& node : net.nodes) {
    for (int sw : net.PathToRoot(node.switch_index)) {
      up_below[sw] += node.up_bps;
      down_below[sw] += node.down_bps;
    }
  }
  std::vector<int> root(s);
  std::iota(root.begin(), root.end(), 0);
  auto find = [&root](int v) {
    while (root[v] != v) v = root[v] = root[root[v]];
    return v;
  };
  for (int sw = 0; sw < s; ++sw) {
    const Switch& node = net.switches[sw];
    if (node.parent < 0) continue;
    const bool bottleneck = node.uplink_up_bps < up_below[sw] || node.uplink_down_bps < down_below[sw];
    if (!bottleneck) {
      const int a = find(sw), b = find(node.parent);
      root[std::max(a, b)] = std::min(a, b);
    }
  }
  std::vector<int> group(s, -1), number(s, -1);
  int groups = 0;
  for (int sw = 0; sw < s; ++sw) {
    const int r = find(sw);
    if (number[r] < 0) number[r] = groups++;
    group[sw] = number[r];
  }
  return group;
}

}  // namespace gridcast
