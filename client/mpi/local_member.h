// Which member of a cluster file is this host's daemon, for an MPI rank (client/mpi/).
#pragma once

#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "common/result.h"

namespace gridcast {

// `named` (GRIDCAST_MEMBER) when not empty and in the cluster; else the one member with an
// address (control, data or BitTorrent: a control socket may be a unix socket) among
// `local_addresses` (this host's, HostAddresses()). An error says what to set when none or
// several are.
Result<std::string> LocalMember(const ClusterConfig& cluster, const std::string& named,
                                const std::vector<std::string>& local_addresses);

// The IPv4 and IPv6 addresses of this host's interfaces (its network namespace's), as text.
std::vector<std::string> HostAddresses();

}  // namespace gridcast
