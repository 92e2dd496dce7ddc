// Which member of a cluster file is this host: for gridcastd without --name, the CLI's default
// source, and an MPI rank's daemon (client/mpi/).
#pragma once

#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "include/gridcast/result.h"

namespace gridcast {

// What a member's addresses are compared with.
struct ThisHost {
  std::vector<std::string> addresses;  // of its interfaces (in its network namespace), as text
  std::string host_name;               // gethostname()
};

// This host, as the kernel names it.
ThisHost CurrentHost();

// Whether a daemon on `here` can listen at `host`: one of its addresses, a wildcard (0.0.0.0,
// ::), its host name, or a name that resolves to one of its addresses.
bool IsAddressOfThisHost(const std::string& host, const ThisHost& here);

// `named` when not empty (InvalidArgument when it is no member); else the one member with an
// address (control, data or BitTorrent: a control socket may be a unix socket) among the
// host's addresses; else the one whose address names the host's name or whose name is the
// host name's first label. NotFound when none is, InvalidArgument when several are; both say
// to set `how` (GRIDCAST_MEMBER, --name).
Result<std::string> LocalMember(const ClusterConfig& cluster, const std::string& named, const ThisHost& host,
                                const std::string& how);

}  // namespace gridcast
