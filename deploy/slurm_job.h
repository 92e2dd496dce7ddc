// SlurmJob: the allocation `gridcast slurm stage` runs in — its nodes and their addresses, as
// Slurm itself names them — and the cluster file of the daemons it starts on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct SlurmNode {
  std::string name;     // Slurm's NodeName (the daemon's member name)
  std::string address;  // its NodeAddr: where slurmctld reaches it, and the other nodes too
};

struct SlurmJob {
  std::string job_id;
  std::vector<SlurmNode> nodes;  // in the allocation's order
  std::string this_node;         // SLURMD_NODENAME: empty outside the job's nodes (salloc's shell)
};

// The allocation this process runs in: SLURM_JOB_ID and SLURM_JOB_NODELIST from the
// environment, the node list expanded and each node's NodeAddr from scontrol.
// FailedPrecondition outside an allocation.
Result<SlurmJob> CurrentSlurmJob();

// NodeName and NodeAddr of every record of `scontrol --oneliner show node` output.
Result<std::vector<SlurmNode>> ParseScontrolNodes(const std::string& text);

// Slurm's file name patterns in a path given for every node: %j the job id, %N the node's
// name (a directory per node on a shared file system), %% a percent sign. InvalidArgument on
// any other %.
Result<std::string> ExpandJobPattern(const std::string& pattern, const std::string& job_id, const std::string& node);

// Ports of one job's daemons when none are given: control at the base, data at base + 1,
// BitTorrent at base + 2, apart for jobs sharing a node and below Linux's ephemeral ports.
uint16_t JobPortBase(const std::string& job_id);

// A member per node (its name, control/data/BitTorrent on its NodeAddr from `port_base`),
// with `secret`.
ClusterConfig SlurmClusterConfig(const SlurmJob& job, uint16_t port_base, std::string secret);

}  // namespace gridcast
