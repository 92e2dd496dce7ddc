// Heterogeneous point-to-point model of Banikazemi et al. ([SUR] 3.2, algorithms.md 3.2) and
// its max-over-paths binomial (any tree) broadcast predictor.
//
//   T(m) = S_c + S_m·m  (sender)  +  X_c + X_m·m  (network)  +  R_c + R_m·m  (receiver)
//
// Thread-safety: pure functions on values.
#pragma once

#include <vector>

#include "include/gridcast/result.h"

namespace gridcast::models {

// Per-node send and receive costs.
struct HeteroNodeParams {
  double send_s = 0;           // S_c
  double send_s_per_byte = 0;  // S_m
  double recv_s = 0;           // R_c
  double recv_s_per_byte = 0;  // R_m
};

// Network transmission costs, shared by every link as in the paper's formula.
struct HeteroNetworkParams {
  double transmit_s = 0;           // X_c
  double transmit_s_per_byte = 0;  // X_m
};

// A broadcast tree: children[v] lists v's children in the order v sends to them.
struct BroadcastTree {
  int root = 0;
  std::vector<std::vector<int>> children;
};

// The binomial tree on p nodes rooted at 0: in round k every node i < 2^k that holds the
// message sends to i + 2^k, so node i's children are i + 2^k for 2^k > i, in round order.
// REQUIRES p >= 1 (InvalidArgument otherwise).
Result<BroadcastTree> BinomialBroadcastTree(int p);

// Point-to-point time from `sender` to `receiver` for m bytes:
// S_c^s + S_m^s·m + X_c + X_m·m + R_c^r + R_m^r·m.
Result<double> HeteroPointToPointSeconds(const HeteroNodeParams& sender,
                                         const HeteroNetworkParams& network,
                                         const HeteroNodeParams& receiver, double m_bytes);

// Broadcast completion time over `tree` ([SUR] 3.2): T(m) = max_i T_recv^i with T_recv^root = 0
// and T_recv^i = T_recv^parent + childrank(parent, i)·(S_c^parent + S_m^parent·m)
//                + X_c + X_m·m + R_c^i + R_m^i·m,
// childrank being i's 1-based position in its parent's send order: a parent serialises its
// sends, the network and receive parts overlap with the next send. The max stays because the
// slowest path is not known in advance. nodes[v] holds node v's parameters.
// InvalidArgument unless the tree spans exactly nodes.size() nodes, each reached once.
Result<double> HeteroTreeBroadcastSeconds(const BroadcastTree& tree,
                                          const std::vector<HeteroNodeParams>& nodes,
                                          const HeteroNetworkParams& network, double m_bytes);

}  // namespace gridcast::models
