// NetgridLayout: how a NetworkModel becomes namespaces, bridges, veths and tc qdiscs.
//
// Pure: computes names, addresses and the exact `ip`/`tc` commands; Netgrid (netgrid.h) runs
// them. Keeping the two apart lets unit tests check the shaping of every field without root.
//
// The network, for node n under switch s whose parent is p:
//   netns <prefix>-n     eth0 (address, shaped to n.up on egress)
//        |  veth
//   netns <prefix>-s     port<k> (shaped to n.down on egress), bridge br0
//        |  veth
//   netns <prefix>-s     uplink  (shaped to s.uplink_up on egress)  -- also in br0 of s
//   netns <prefix>-p     down<j> (shaped to s.uplink_down on egress) -- in br0 of p
// Egress shaping on each end makes every rate hold in its own direction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectives/network_model.h"

namespace gridcast {

struct NetgridNode {
  std::string name;
  std::string netns;
  std::string address;      // IPv4, no prefix length
  std::string switch_name;
};

struct NetgridLayout {
  std::string prefix;
  std::vector<NetgridNode> nodes;          // in model order
  std::vector<std::string> switch_netns;   // in model order
  std::vector<std::vector<std::string>> setup_commands;  // in order
  std::vector<std::string> notes;          // what netgrid cannot do, e.g. latency
};

// Every node lives in one L2 segment, 198.18.0.0/15 (RFC 2544's benchmarking range): the
// namespaces are joined to nothing outside, so these addresses reach only our own hosts.
inline constexpr int kNetgridPrefixLength = 15;
std::string NetgridAddress(int node_index);

// REQUIRES: model parsed by ParseTopology (valid names, a tree of switches).
NetgridLayout PlanNetgrid(const NetworkModel& model, std::string_view prefix);

// `tc qdisc replace dev DEV root tbf ...` shaping egress of DEV in NETNS to rate_bps.
std::vector<std::string> ShapeCommand(const std::string& netns, const std::string& dev,
                                      double rate_bps);

// Node `node` of the model a netgrid with `prefix` was laid out from, shaped to rate_bps both
// ways on the live netgrid (bench --slow: a NIC slower than the topology says): its eth0
// (upload) and its switch's port toward it (download).
// REQUIRES: 0 <= node < model.nodes.size().
std::vector<std::vector<std::string>> SlowNodeCommands(const NetworkModel& model, std::string_view prefix, int node,
                                                       double rate_bps);

// An HTTP origin behind a link of its own to the source (bench --origin-rate): namespace
// <prefix>-@origin (no node of a topology has that name, and netgrid down removes it with the
// others), whose eth0 (192.0.2.1, TEST-NET-1) is joined by a veth to the source's namespace
// (its end `origin0`, 192.0.2.2/30), shaped to rate_bps both ways. The commands create it on a
// live netgrid.
struct OriginLink {
  std::string netns;
  std::string address;         // the origin's, seen from the source
  std::vector<std::vector<std::string>> setup_commands;
};
// REQUIRES: model.source is a node of the model.
OriginLink PlanOriginLink(const NetworkModel& model, std::string_view prefix, double rate_bps);

}  // namespace gridcast
