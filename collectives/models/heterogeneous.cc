#include "collectives/models/heterogeneous.h"

#include <algorithm>
#include <string>

#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

Status CheckNode(const HeteroNodeParams& node) {
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("send_s", node.send_s));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("send_s_per_byte", node.send_s_per_byte));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("recv_s", node.recv_s));
  return CheckNonNegative("recv_s_per_byte", node.recv_s_per_byte);
}

Status CheckNetwork(const HeteroNetworkParams& network) {
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("transmit_s", network.transmit_s));
  return CheckNonNegative("transmit_s_per_byte", network.transmit_s_per_byte);
}

}  // namespace

Result<BroadcastTree> BinomialBroadcastTree(int p) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  BroadcastTree tree;
  tree.children.resize(p);
  for (int step = 1; step < p; step *= 2) {
    for (int i = 0; i < step && i + step < p; ++i) tree.children[i].push_back(i + step);
  }
  return tree;
}

Result<double> HeteroPointToPointSeconds(const HeteroNodeParams& sender,
                                         const HeteroNetworkParams& network,
                                         const HeteroNodeParams& receiver, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckNode(sender));
  GRIDCAST_RETURN_IF_ERROR(CheckNode(receiver));
  GRIDCAST_RETURN_IF_ERROR(CheckNetwork(network));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  return sender.send_s + sender.send_s_per_byte * m_bytes + network.transmit_s +
         network.transmit_s_per_byte * m_bytes + receiver.recv_s +
         receiver.recv_s_per_byte * m_bytes;
}

Result<double> HeteroTreeBroadcastSeconds(const BroadcastTree& tree,
                                          const std::vector<HeteroNodeParams>& nodes,
                                          const HeteroNetworkParams& network, double m_bytes) {
  const int p = static_cast<int>(nodes.size());
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("number of nodes", p, 1));
  for (const HeteroNodeParams& node : nodes) GRIDCAST_RETURN_IF_ERROR(CheckNode(node));
  GRIDCAST_RETURN_IF_ERROR(CheckNetwork(network));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  if (tree.children.size() != nodes.size() || tree.root < 0 || tree.root >= p) {
    return Status::InvalidArgument(
        "the tree must have one child list per node and a root in range");
  }
  // Walk from the root; a node's time is final when its parent is visited.
  std::vector<double> recv_s(p, -1);
  recv_s[tree.root] = 0;
  std::vector<int> stack = {tree.root};
  int reached = 1;
  double latest_s = 0;
  while (!stack.empty()) {
    const int parent = stack.back();
    stack.pop_back();
    const HeteroNodeParams& s = nodes[parent];
    const double send_one_s = s.send_s + s.send_s_per_byte * m_bytes;
    const double network_s = network.transmit_s + network.transmit_s_per_byte * m_bytes;
    int rank = 0;
    for (int child : tree.children[parent]) {
      ++rank;
      if (child < 0 || child >= p || recv_s[child] >= 0) {
        return Status::InvalidArgument("node " + std::to_string(child) +
                                       " is out of range or reached twice in the tree");
      }
      const HeteroNodeParams& r = nodes[child];
      recv_s[child] =
          recv_s[parent] + rank * send_one_s + network_s + r.recv_s + r.recv_s_per_byte * m_bytes;
      latest_s = std::max(latest_s, recv_s[child]);
      ++reached;
      stack.push_back(child);
    }
  }
  if (reached != p) {
    return Status::InvalidArgument("the tree reaches " + std::to_string(reached) + " of " +
                                   std::to_string(p) + " nodes");
  }
  return latest_s;
}

}  // namespace gridcast::models
