#include "tomography/inferred_topology.h"

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "collectives/bandwidth_groups.h"

namespace gridcast {
namespace {

Status CheckName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  if (!ok) {
    return Status::InvalidArgument("node name '" + name +
                                   "' cannot be written to a topology file (1-64 characters of "
                                   "letters, digits, '-', '_', '.')");
  }
  return Status::Ok();
}

double Rounded(double bps) {
  if (!std::isfinite(bps) || bps <= 0) return kUnshaped;
  return std::max(1.0, std::round(bps / 1e3)) * 1e3;
}

}  // namespace

Result<NetworkModel> InferNetworkModel(const std::vector<InferredCluster>& clusters,
                                       const std::vector<std::string>& unplaced,
                                       const std::string& source, const std::string& name) {
  std::set<std::string> node_names;
  auto claim = [&](const std::string& node) -> Status {
    GRIDCAST_RETURN_IF_ERROR(CheckName(node));
    if (!node_names.insert(node).second) {
      return Status::InvalidArgument("node '" + node + "' appears twice");
    }
    return Status::Ok();
  };
  for (const InferredCluster& c : clusters) {
    for (const std::string& node : c.nodes) GRIDCAST_RETURN_IF_ERROR(claim(node));
  }
  for (const std::string& node : unplaced) GRIDCAST_RETURN_IF_ERROR(claim(node));
  if (node_names.empty()) return Status::InvalidArgument("no nodes to write");

  auto switch_name = [&](std::string base) {
    while (node_names.count(base)) base = "tomo-" + base;
    return base;
  };
  NetworkModel model;
  model.name = name;
  model.switches.push_back(Switch{.name = switch_name("core")});
  for (size_t c = 0; c < clusters.size(); ++c) {
    const double uplink = Rounded(clusters[c].uplink_bps);
    model.switches.push_back(Switch{.name = switch_name("cluster-" + std::to_string(c + 1)),
                                    .parent = 0,
                                    .uplink_up_bps = uplink,
                                    .uplink_down_bps = uplink});
    const double nic = Rounded(clusters[c].node_bps);
    for (const std::string& node : clusters[c].nodes) {
      model.nodes.push_back(Node{
          .name = node, .switch_index = static_cast<int>(c + 1), .up_bps = nic, .down_bps = nic});
    }
  }
  for (const std::string& node : unplaced) model.nodes.push_back(Node{.name = node});
  model.source = model.FindNode(source).value_or(0);
  return model;
}

Partition TruthFromTopology(const NetworkModel& model) {
  const std::vector<int> group = SwitchBandwidthGroups(model);
  std::map<int, std::vector<std::string>> clusters;
  for (const Node& node : model.nodes) clusters[group[node.switch_index]].push_back(node.name);
  Partition out;
  for (auto& [g, names] : clusters) out.clusters.push_back(std::move(names));
  return Canonical(std::move(out));
}

}  // namespace gridcast
