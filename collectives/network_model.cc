#include "collectives/network_model.h"

#include <algorithm>

namespace gridcast {

std::optional<int> NetworkModel::FindNode(std::string_view node_name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == node_name) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::optional<int> NetworkModel::FindSwitch(std::string_view switch_name) const {
  for (size_t i = 0; i < switches.size(); ++i) {
    if (switches[i].name == switch_name) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::vector<int> NetworkModel::PathToRoot(int switch_index) const {
  std::vector<int> path;
  for (int s = switch_index; s >= 0; s = switches[s].parent) path.push_back(s);
  return path;
}

bool NetworkModel::IsInSubtree(int descendant, int ancestor) const {
  for (int s = descendant; s >= 0; s = switches[s].parent) {
    if (s == ancestor) return true;
  }
  return false;
}

std::vector<int> NetworkModel::NodesInSubtree(int switch_index) const {
  std::vector<int> result;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (IsInSubtree(nodes[i].switch_index, switch_index)) result.push_back(static_cast<int>(i));
  }
  return result;
}

double NetworkModel::PathLatencySeconds(int node_a, int node_b) const {
  std::vector<int> a = PathToRoot(nodes[node_a].switch_index);
  std::vector<int> b = PathToRoot(nodes[node_b].switch_index);
  // Drop the common ancestors; what remains are the uplinks crossed.
  while (!a.empty() && !b.empty() && a.back() == b.back()) {
    a.pop_back();
    b.pop_back();
  }
  double latency = 0;
  for (int s : a) latency += switches[s].latency_s;
  for (int s : b) latency += switches[s].latency_s;
  return latency;
}

}  // namespace gridcast
