// NetworkModel: the network of ../shared/design/topology.md as plain data.
//
// One model is built by ParseTopology() and then read by netgrid (to build it for real), the
// simulator and planners (to predict and plan) and tomography (as ground truth). Rates are in
// bits per second; an unshaped rate is +infinity so formulas such as bytes / rate just work.
// Immutable after construction; safe to share between threads for reading.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gridcast {

inline constexpr double kUnshaped = std::numeric_limits<double>::infinity();

struct Switch {
  std::string name;
  int parent = -1;                  // index into NetworkModel::switches; -1 for the root
  double uplink_up_bps = kUnshaped;    // child -> parent
  double uplink_down_bps = kUnshaped;  // parent -> child
  double latency_s = 0;             // one-way on the uplink; simulator only (no netem here)
};

struct Node {
  std::string name;
  int switch_index = 0;             // index into NetworkModel::switches
  double up_bps = kUnshaped;        // NIC egress
  double down_bps = kUnshaped;      // NIC ingress
};

struct NetworkModel {
  std::string name;
  std::vector<Switch> switches;     // file order; switches[0] is the root ("core")
  std::vector<Node> nodes;
  int source = 0;                   // index into nodes; broadcasts start here by default

  std::optional<int> FindNode(std::string_view node_name) const;
  std::optional<int> FindSwitch(std::string_view switch_name) const;

  // Switch indices from `switch_index` up to the root, both included.
  std::vector<int> PathToRoot(int switch_index) const;
  // True when switch `descendant` is `ancestor` or lies below it.
  bool IsInSubtree(int descendant, int ancestor) const;
  // Nodes hung under switch `switch_index` or any switch below it.
  std::vector<int> NodesInSubtree(int switch_index) const;
  // Sum of the one-way latencies of the uplinks between the switches of nodes a and b.
  double PathLatencySeconds(int node_a, int node_b) const;
};

}  // namespace gridcast
