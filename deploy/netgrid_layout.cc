#include "deploy/netgrid_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>


namespace gridcast {
namespace {

using Command = std::vector<std::string>;

Command Ip(const std::string& netns, std::initializer_list<std::string> args) {
  Command command = {"ip", "-n", netns};
  command.insert(command.end(), args);
  return command;
}

}  // namespace

std::string NetgridAddress(int node_index) {
  // Host numbers start at 1 and run through 198.18.0.0/15 (131070 usable hosts).
  const uint32_t base = (198u << 24) | (18u << 16);
  const uint32_t address = base + static_cast<uint32_t>(node_index) + 1;
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 255) + "." +
         std::to_string((address >> 8) & 255) + "." + std::to_string(address & 255);
}

std::vector<std::string> ShapeCommand(const std::string& netns, const std::string& dev,
                                      double rate_bps) {
  // The bucket holds 4 ms of traffic, and at least 128 KiB: tbf splits a GSO super-packet
  // (up to 64 KiB plus headers) that does not fit its bucket into MTU-sized packets, and that
  // per-packet work capped the host: 16 iperf3 flows on flat16 (100mbit) moved 914 mbit in
  // total at 100% CPU with a 50 KB bucket (and 64 KiB), 1522 mbit at 13% with 128 KiB. The
  // queue holds 50 ms.
  const double bytes_per_s = rate_bps / 8;
  const auto burst = static_cast<uint64_t>(std::max(128.0 * 1024, bytes_per_s * 0.004));
  return {"tc", "-n", netns, "qdisc", "replace", "dev", dev, "root", "tbf",
          "rate", std::to_string(static_cast<uint64_t>(std::llround(rate_bps))) + "bit",
          "burst", std::to_string(burst), "latency", "50ms"};
}

namespace {
std::string NetnsOf(std::string_view prefix, const std::string& name) { return std::string(prefix) + "-" + name; }
std::string PortOf(size_t node) { return "port" + std::to_string(node); }
}  // namespace

std::vector<std::vector<std::string>> SlowNodeCommands(const NetworkModel& model, std::string_view prefix, int node,
                                                       double rate_bps) {
  const Node& slowed = model.nodes.at(static_cast<size_t>(node));
  return {ShapeCommand(NetnsOf(prefix, slowed.name), "eth0", rate_bps),
          ShapeCommand(NetnsOf(prefix, model.switches[slowed.switch_index].name), PortOf(static_cast<size_t>(node)),
                       rate_bps)};
}

OriginLink PlanOriginLink(const NetworkModel& model, std::string_view prefix, double rate_bps) {
  OriginLink link;
  link.netns = NetnsOf(prefix, "@origin");
  link.address = "192.0.2.1";
  const std::string source_ns = NetnsOf(prefix, model.nodes.at(static_cast<size_t>(model.source)).name);
  link.setup_commands = {
      {"ip", "netns", "add", link.netns},
      Ip(link.netns, {"link", "set", "lo", "up"}),
      Ip(link.netns, {"link", "add", "eth0", "type", "veth", "peer", "name", "origin0", "netns", source_ns}),
      Ip(link.netns, {"addr", "add", link.address + "/30", "dev", "eth0"}),
      Ip(link.netns, {"link", "set", "eth0", "up"}),
      Ip(source_ns, {"addr", "add", "192.0.2.2/30", "dev", "origin0"}),
      Ip(source_ns, {"link", "set", "origin0", "up"}),
      ShapeCommand(link.netns, "eth0", rate_bps),
      ShapeCommand(source_ns, "origin0", rate_bps),
  };
  return link;
}

NetgridLayout PlanNetgrid(const NetworkModel& model, std::string_view prefix) {
  NetgridLayout layout;
  layout.prefix = std::string(prefix);
  auto netns_of = [&](const std::string& name) { return NetnsOf(layout.prefix, name); };
  auto& commands = layout.setup_commands;

  for (const Switch& sw : model.switches) {
    const std::string netns = netns_of(sw.name);
    layout.switch_netns.push_back(netns);
    commands.push_back({"ip", "netns", "add", netns});
    commands.push_back(Ip(netns, {"link", "set", "lo", "up"}));
    commands.push_back(Ip(netns, {"link", "add", "br0", "type", "bridge"}));
    commands.push_back(Ip(netns, {"link", "set", "br0", "up"}));
  }

  // Uplinks: the child switch's end is "uplink", the parent's end "down<child index>".
  for (size_t s = 0; s < model.switches.size(); ++s) {
    const Switch& sw = model.switches[s];
    if (sw.parent < 0) continue;
    const std::string child_ns = layout.switch_netns[s];
    const std::string parent_ns = layout.switch_netns[sw.parent];
    const std::string parent_dev = "down" + std::to_string(s);
    commands.push_back(Ip(child_ns, {"link", "add", "uplink", "type", "veth", "peer", "name",
                                     parent_dev, "netns", parent_ns}));
    commands.push_back(Ip(child_ns, {"link", "set", "uplink", "master", "br0", "up"}));
    commands.push_back(Ip(parent_ns, {"link", "set", parent_dev, "master", "br0", "up"}));
    if (std::isfinite(sw.uplink_up_bps)) {
      commands.push_back(ShapeCommand(child_ns, "uplink", sw.uplink_up_bps));
    }
    if (std::isfinite(sw.uplink_down_bps)) {
      commands.push_back(ShapeCommand(parent_ns, parent_dev, sw.uplink_down_bps));
    }
    if (sw.latency_s > 0) {
      layout.notes.push_back("latency on the uplink of '" + sw.name +
                             "': simulator only (netem is not available in this kernel)");
    }
  }

  for (size_t n = 0; n < model.nodes.size(); ++n) {
    const Node& node = model.nodes[n];
    NetgridNode entry{node.name, netns_of(node.name), NetgridAddress(static_cast<int>(n)),
                      model.switches[node.switch_index].name};
    const std::string switch_ns = layout.switch_netns[node.switch_index];
    const std::string port = PortOf(n);
    commands.push_back({"ip", "netns", "add", entry.netns});
    commands.push_back(Ip(entry.netns, {"link", "set", "lo", "up"}));
    commands.push_back(Ip(entry.netns, {"link", "add", "eth0", "type", "veth", "peer", "name",
                                        port, "netns", switch_ns}));
    commands.push_back(Ip(entry.netns, {"addr", "add",
                                        entry.address + "/" + std::to_string(kNetgridPrefixLength),
                                        "dev", "eth0"}));
    commands.push_back(Ip(entry.netns, {"link", "set", "eth0", "up"}));
    commands.push_back(Ip(switch_ns, {"link", "set", port, "master", "br0", "up"}));
    if (std::isfinite(node.up_bps)) commands.push_back(ShapeCommand(entry.netns, "eth0", node.up_bps));
    if (std::isfinite(node.down_bps)) commands.push_back(ShapeCommand(switch_ns, port, node.down_bps));
    layout.nodes.push_back(std::move(entry));
  }
  return layout;
}

}  // namespace gridcast
