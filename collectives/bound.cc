#include "collectives/bound.h"

#include <algorithm>
#include <cassert>

#include "common/units.h"

namespace gridcast {
namespace {

// Seconds to move `bits` through `bps`; unshaped (infinite) rates cost nothing.
double Seconds(double bits, double bps) { return bits == 0 || bps == kUnshaped ? 0 : bits / bps; }

}  // namespace

BroadcastBound ComputeBroadcastBound(const NetworkModel& net, int source_node,
                                     const std::vector<int>& member_nodes, uint64_t payload_bytes) {
  const int num_nodes = static_cast<int>(net.nodes.size());
  assert(source_node >= 0 && source_node < num_nodes);
  std::vector<bool> member(num_nodes, member_nodes.empty());
  for (int node : member_nodes) {
    assert(node >= 0 && node < num_nodes);
    member[node] = true;
  }
  member[source_node] = true;

  BroadcastBound bound;
  const auto consider = [&bound](double seconds, BoundTerm term, int where) {
    if (seconds > bound.seconds) bound = {seconds, term, where};
  };
  const double bits = 8.0 * static_cast<double>(payload_bytes);

  // Per switch: receivers and their upload in its subtree (receivers exclude the source, whose
  // upload still counts toward the total).
  const int num_switches = static_cast<int>(net.switches.size());
  std::vector<int> receivers_below(num_switches, 0);
  std::vector<double> up_below_bps(num_switches, 0);
  int members = 0;
  double up_total_bps = 0;
  for (int v = 0; v < num_nodes; ++v) {
    if (!member[v]) continue;
    ++members;
    up_total_bps += net.nodes[v].up_bps;
    for (int s : net.PathToRoot(net.nodes[v].switch_index)) {
      up_below_bps[s] += net.nodes[v].up_bps;
      if (v != source_node) ++receivers_below[s];
    }
  }
  const int receivers = members - 1;
  if (receivers == 0) return bound;

  consider(Seconds(bits, net.nodes[source_node].up_bps), BoundTerm::kSourceUpload, source_node);
  for (int v = 0; v < num_nodes; ++v) {
    if (member[v] && v != source_node) {
      consider(Seconds(bits, net.nodes[v].down_bps), BoundTerm::kReceiverDownload, v);
    }
  }
  consider(Seconds(receivers * bits, up_total_bps), BoundTerm::kTotalUpload, -1);
  for (int s = 1; s < num_switches; ++s) {
    // S is the side of the uplink without the source: the subtree, or everything else.
    const bool source_below = net.IsInSubtree(net.nodes[source_node].switch_index, s);
    const int k = source_below ? receivers - receivers_below[s] : receivers_below[s];
    if (k == 0) continue;
    const double toward_bps =
        source_below ? net.switches[s].uplink_up_bps : net.switches[s].uplink_down_bps;
    const double up_in_side_bps = source_below ? up_total_bps - up_below_bps[s] : up_below_bps[s];
    consider(Seconds(bits, toward_bps), BoundTerm::kUplink, s);
    consider(Seconds(k * bits, toward_bps + up_in_side_bps), BoundTerm::kCutUpload, s);
  }
  return bound;
}

double BroadcastBoundSeconds(const NetworkModel& net, int source_node,
                             const std::vector<int>& member_nodes, uint64_t payload_bytes) {
  return ComputeBroadcastBound(net, source_node, member_nodes, payload_bytes).seconds;
}

double AllgatherBoundSeconds(const NetworkModel& net, const std::vector<int>& part_nodes,
                             const std::vector<uint64_t>& part_bytes) {
  assert(part_nodes.size() == part_bytes.size());
  const int num_nodes = static_cast<int>(net.nodes.size());
  std::vector<double> own_bits(num_nodes, 0);
  std::vector<bool> member(num_nodes, false);
  for (size_t i = 0; i < part_nodes.size(); ++i) {
    assert(part_nodes[i] >= 0 && part_nodes[i] < num_nodes);
    member[part_nodes[i]] = true;
    own_bits[part_nodes[i]] += 8.0 * static_cast<double>(part_bytes[i]);
  }
  const int num_switches = static_cast<int>(net.switches.size());
  std::vector<int> members_below(num_switches, 0);
  std::vector<double> bits_below(num_switches, 0);
  int members = 0;
  double total_bits = 0, up_total_bps = 0;
  for (int v = 0; v < num_nodes; ++v) {
    if (!member[v]) continue;
    ++members;
    total_bits += own_bits[v];
    up_total_bps += net.nodes[v].up_bps;
    for (int s : net.PathToRoot(net.nodes[v].switch_index)) {
      ++members_below[s];
      bits_below[s] += own_bits[v];
    }
  }
  if (members < 2) return 0;
  double bound = Seconds((members - 1) * total_bits, up_total_bps);
  for (int v = 0; v < num_nodes; ++v) {
    if (!member[v]) continue;
    bound = std::max({bound, Seconds(total_bits - own_bits[v], net.nodes[v].down_bps),
                      Seconds(own_bits[v], net.nodes[v].up_bps)});
  }
  for (int s = 1; s < num_switches; ++s) {
    if (members_below[s] == 0 || members_below[s] == members) continue;
    bound = std::max({bound, Seconds(total_bits - bits_below[s], net.switches[s].uplink_down_bps),
                      Seconds(bits_below[s], net.switches[s].uplink_up_bps)});
  }
  return bound;
}

std::string DescribeBound(const BroadcastBound& bound, const NetworkModel& net) {
  switch (bound.term) {
    case BoundTerm::kNone:
      return "nothing to send";
    case BoundTerm::kSourceUpload:
      return "upload of the source " + net.nodes[bound.where].name + " (" +
             FormatRate(net.nodes[bound.where].up_bps) + ")";
    case BoundTerm::kReceiverDownload:
      return "download of " + net.nodes[bound.where].name + " (" +
             FormatRate(net.nodes[bound.where].down_bps) + ")";
    case BoundTerm::kUplink:
      return "uplink of switch " + net.switches[bound.where].name;
    case BoundTerm::kTotalUpload:
      return "total upload of all members";
    case BoundTerm::kCutUpload:
      return "uplink of switch " + net.switches[bound.where].name +
             " plus the upload of the members on its far side";
  }
  return "";
}

}  // namespace gridcast
