// What `gridcast cluster init` and `gridcast cluster add-host` make of a host list: the members
// of a cluster file (TCP control and data addresses on fixed ports) and a topology skeleton
// (one switch per site, the nodes under it, no rates yet). Pure (text in, text out); the
// command writes the files, the secret and the certificates.
//
// A host list has one host per line, '#' starting a comment:
//
//   HOST [NAME [SITE]]
//
// HOST is a DNS name or an IP address the other members reach the host at. NAME, the member's
// name, defaults to HOST's first label for a DNS name ("lyon-3.grid.example.org": "lyon-3"); an
// IP address needs one. SITE, when the list names none, is the first of `sites` that the
// member's name starts with ("lyon" for "lyon-3"); with no sites at all, every host hangs under
// one switch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_file.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct ClusterHost {
  std::string host;
  std::string name;
  std::string site;  // empty: no sites
};

struct ClusterPorts {
  uint16_t control = 7700;
  uint16_t data = 7701;
  uint16_t bt = 0;  // 0: the data port + 1 (the cluster file's default)
};

// Errors name the line: a bad host or name, an IP address without a name, a duplicate name or
// host, a site for some hosts and not others, a host no site matches.
Result<std::vector<ClusterHost>> ParseHostList(std::string_view text, const std::vector<std::string>& sites);

// One host as the list names it (`line` without the comment), for add-host.
Result<ClusterHost> ParseHost(std::string_view line, const std::vector<std::string>& sites);

ClusterMember MemberFor(const ClusterHost& host, const ClusterPorts& ports);

// A topology file (../shared/design/topology.md) naming `hosts`: a switch per site under "core"
// (or every node under "core"), rates left out (unshaped) with comments saying where they go,
// the first host the default source. ParseTopology() reads it.
std::string TopologySkeleton(const std::string& name, const std::vector<ClusterHost>& hosts);

// `topology` with one more node: under its site's switch (added under the first switch when the
// file has none of that name), or the first switch when the host has no site. Keeps the rest of
// the text, comments included. InvalidArgument when the file's `switches:` or `nodes:` is not
// a block list, or when the result is not a valid topology (a duplicate name).
Result<std::string> AddHostToTopology(std::string_view topology, const ClusterHost& host);

}  // namespace gridcast
