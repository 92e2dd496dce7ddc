// A real Slurm on a netgrid, for tests and benchmarks of `gridcast slurm stage` against
// `sbcast`: Debian's munged, slurmctld and slurmd, one slurmd per node.
//
// Every Slurm process runs in its node's network namespace (entered with nsenter, so the
// host's /sys/fs/cgroup stays visible to slurmd). Each slurmd, and so every job step it
// starts, also has a UTS namespace whose host name is the node's name, and a mount namespace
// in which STATE/slurm/local is the node's own directory STATE/slurm/nodes/NODE: one
// node-local path, private to each node, as /tmp is on a real cluster; /etc/hosts there names
// every node, as a cluster's DNS would. slurmctld runs on the
// first node; munged too, with its own key and socket under STATE/slurm. Everything runs as
// root. NetgridDown() stops it all with the namespaces' other processes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "include/gridcast/result.h"
#include "deploy/netgrid.h"

namespace gridcast {

// Writes STATE/slurm/slurm.conf for the netgrid's nodes, starts munged, slurmctld and the
// slurmds, and waits until every node is idle. Returns the slurm.conf path.
Result<std::filesystem::path> StartSlurmOnNetgrid(const NetgridState& netgrid, const std::filesystem::path& state_dir);

// The path every node's jobs see as their node-local directory, and where the host finds
// what `node` wrote there.
std::filesystem::path SlurmLocalDir(const std::filesystem::path& state_dir);
std::filesystem::path SlurmNodeDir(const std::filesystem::path& state_dir, const std::string& node);

// argv that runs a Slurm client command (sbatch, squeue, ...) in `node`'s network namespace
// with this Slurm's configuration.
std::vector<std::string> SlurmExecArgv(const NetgridNode& node, const std::filesystem::path& state_dir,
                                       const std::vector<std::string>& command);

}  // namespace gridcast
