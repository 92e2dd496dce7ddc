// Between tomography's clusters and topology files (../shared/design/topology.md):
// InferNetworkModel writes the reconstruction as a network the planners and the simulator can
// use, and TruthFromTopology gives the clusters a known network should produce, to score a
// reconstruction with partition_compare.h.
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "include/gridcast/result.h"
#include "tomography/partition_compare.h"

namespace gridcast {

struct InferredCluster {
  std::vector<std::string> nodes;
  double node_bps = kUnshaped;    // NIC rate of each node (both directions)
  double uplink_bps = kUnshaped;  // the cluster's link to the rest (both directions)
};

// One switch per cluster ("cluster-1", ...) under a root switch ("core"); a cluster's uplink
// and its nodes' NICs get the given rates, rounded to whole kbit/s (so the file reads back
// exactly); non-finite or non-positive rates mean unshaped. The star is a logical model: the
// rate between clusters A and B is min(uplink A, uplink B), which reproduces the measured
// bottlenecks when they sit on one side of each cluster pair. `unplaced` nodes (flagged by the
// tomography) hang under the root, unshaped. Switch names that clash with node names get
// a "tomo-" prefix. `source` must be one of the nodes (else the first node is the source).
// Errors: InvalidArgument for no nodes, a duplicate node, or a name ParseTopology() would
// reject (1-64 characters of letters, digits, '-', '_', '.').
Result<NetworkModel> InferNetworkModel(const std::vector<InferredCluster>& clusters,
                                       const std::vector<std::string>& unplaced,
                                       const std::string& source, const std::string& name);

// The logical clusters of a known network: an uplink is a bottleneck when its rate in a
// direction is below the sum of the NIC rates under it in that direction (the nodes below
// could together send or receive faster than it carries); cutting every bottleneck uplink
// splits the switch tree into pieces, and the nodes of one piece form one cluster. Unshaped
// uplinks never cut (collectives/bandwidth_groups.h, the same groups the pull planner uses).
// Canonical order.
Partition TruthFromTopology(const NetworkModel& model);

}  // namespace gridcast
