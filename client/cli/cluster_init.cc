#include "client/cli/cluster_init.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "collectives/topology.h"

namespace gridcast {
namespace {

constexpr std::string_view kRootSwitch = "core";

bool IsIpv6(std::string_view host) { return host.find(':') != std::string_view::npos; }

Status CheckHost(std::string_view host) {
  if (IsIpv6(host)) {
    const bool hex = host.find_first_not_of("0123456789abcdefABCDEF:.") == std::string_view::npos;
    return hex ? Status::Ok() : Status::InvalidArgument("'" + std::string(host) + "' is not an IPv6 address");
  }
  const bool ok = !host.empty() && host.size() <= 253 && host.front() != '-' && host.front() != '.' &&
                  std::all_of(host.begin(), host.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
                  });
  return ok ? Status::Ok() : Status::InvalidArgument("'" + std::string(host) + "' is not a host name or address");
}

std::string Bracketed(const std::string& host) { return IsIpv6(host) ? "[" + host + "]" : host; }

std::vector<std::string> Words(std::string_view line) {
  std::istringstream in{std::string(line.substr(0, line.find('#')))};
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of the top-level block list `key:` of a YAML file: [first item's line, end), and
// the items' indentation. InvalidArgument when there is no such block list.
struct BlockList {
  size_t key_line = 0;
  size_t end = 0;
  size_t indent = 0;
};

Result<BlockList> FindBlockList(const std::vector<std::string>& lines, const std::string& key) {
  const std::string head = key + ":";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].compare(0, head.size(), head) != 0) continue;
    const std::vector<std::string> rest = Words(std::string_view(lines[i]).substr(head.size()));
    if (!rest.empty()) break;  // a flow list, or a value on the key's line
    BlockList block{i, i + 1, 2};
    bool indent_seen = false;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      const std::string& line = lines[j];
      if (line.empty() || line.front() == '#') continue;
      const size_t first = line.find_first_not_of(' ');
      if (first == std::string::npos) continue;
      if (first == 0 && line.front() != '-') break;  // the next top-level key
      if (!indent_seen && line[first] == '-') {
        block.indent = first;
        indent_seen = true;
      }
      block.end = j + 1;
    }
    return block;
  }
  return Status::InvalidArgument("the topology has no block list '" + key +
                                 ":' (one item per line) to add a host to; add it by hand");
}

}  // namespace

Result<ClusterHost> ParseHost(std::string_view line, const std::vector<std::string>& sites) {
  const std::vector<std::string> words = Words(line);
  if (words.empty() || words.size() > 3) {
    return Status::InvalidArgument("expected HOST [NAME [SITE]], not '" + std::string(line) + "'");
  }
  ClusterHost host;
  host.host = words[0];
  GRIDCAST_RETURN_IF_ERROR(CheckHost(host.host));
  if (words.size() >= 2) {
    host.name = words[1];
  } else if (IsIpAddress(host.host)) {
    return Status::InvalidArgument("the address " + host.host + " needs a member name after it (HOST NAME)");
  } else {
    host.name = host.host.substr(0, host.host.find('.'));
  }
  if (!IsTopologyName(host.name)) {
    return Status::InvalidArgument("member name '" + host.name + "' may only use letters, digits, '-', '_', '.' (1 to 64)");
  }
  if (words.size() == 3) {
    host.site = words[2];
  } else {
    for (const std::string& site : sites) {
      if (host.name.compare(0, site.size(), site) == 0) {
        host.site = site;
        break;
      }
    }
    if (!sites.empty() && host.site.empty()) {
      return Status::InvalidArgument("member '" + host.name + "' starts with none of the sites' names; name its site (HOST NAME SITE)");
    }
  }
  if (!host.site.empty() && (!IsTopologyName(host.site) || host.site == kRootSwitch)) {
    return Status::InvalidArgument("site '" + host.site + "' may only use letters, digits, '-', '_', '.' and is not '" +
                                   std::string(kRootSwitch) + "'");
  }
  return host;
}

Result<std::vector<ClusterHost>> ParseHostList(std::string_view text, const std::vector<std::string>& sites) {
  std::vector<ClusterHost> hosts;
  std::set<std::string> names;
  std::set<std::string> addresses;
  const std::vector<std::string> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (Words(lines[i]).empty()) continue;
    const std::string where = "line " + std::to_string(i + 1) + ": ";
    Result<ClusterHost> host = ParseHost(lines[i], sites);
    if (!host.ok()) return Status::InvalidArgument(where + host.status().message());
    if (!names.insert(host->name).second) return Status::InvalidArgument(where + "a second member named '" + host->name + "'");
    if (!addresses.insert(host->host).second) return Status::InvalidArgument(where + "host " + host->host + " again");
    if (!hosts.empty() && hosts.front().site.empty() != host->site.empty()) {
      return Status::InvalidArgument(where + "name a site for every host or for none");
    }
    hosts.push_back(std::move(*host));
  }
  if (hosts.empty()) return Status::InvalidArgument("the host list names no host");
  return hosts;
}

ClusterMember MemberFor(const ClusterHost& host, const ClusterPorts& ports) {
  ClusterMember member;
  member.name = host.name;
  member.control_address = Bracketed(host.host) + ":" + std::to_string(ports.control);
  member.data_address = Bracketed(host.host) + ":" + std::to_string(ports.data);
  if (ports.bt != 0) member.bt_address = Bracketed(host.host) + ":" + std::to_string(ports.bt);
  return member;
}

std::string TopologySkeleton(const std::string& name, const std::vector<ClusterHost>& hosts) {
  std::ostringstream out;
  out << "# The network of cluster " << name << ", written by `gridcast cluster init`: a switch per site\n"
      << "# under the core, the nodes under their site. Rates left out are unshaped (as fast as any):\n"
      << "# give each group its NICs' rates and each site its link to the core (up: 10gbit, down:\n"
      << "# 10gbit, uplink: 1gbit), or learn them with `gridcast tomography`. Format: docs/topology.md.\n"
      << "name: " << name << "\nswitches:\n  - name: " << kRootSwitch << "\n";
  std::vector<std::string> sites;  // in the list's order
  std::map<std::string, std::vector<std::string>> members_of;
  for (const ClusterHost& host : hosts) {
    const std::string site = host.site.empty() ? std::string(kRootSwitch) : host.site;
    if (!members_of.count(site)) sites.push_back(site);
    members_of[site].push_back(host.name);
  }
  for (const std::string& site : sites) {
    if (site == kRootSwitch) continue;
    out << "  - name: " << site << "\n    parent: " << kRootSwitch << "\n    # uplink: 1gbit           # "
        << site << "'s link to the core\n";
  }
  out << "nodes:\n";
  for (const std::string& site : sites) {
    out << "  - switch: " << site << "\n    names: [";
    const std::vector<std::string>& names = members_of[site];
    for (size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
    out << "]\n    # up: 10gbit              # the NICs' rates\n    # down: 10gbit\n";
  }
  return out.str();
}

Result<std::string> AddHostToTopology(std::string_view topology, const ClusterHost& host) {
  Result<NetworkModel> model = ParseTopology(topology);
  if (!model.ok()) return model.status().WithContext("the topology before adding " + host.name);
  std::vector<std::string> lines = Lines(topology);
  const std::string root = model->switches.front().name;
  const std::string site = host.site.empty() ? root : host.site;
  GRIDCAST_ASSIGN_OR_RETURN(const BlockList nodes, FindBlockList(lines, "nodes"));
  const std::string node_indent(nodes.indent, ' ');
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(nodes.end),
               {node_indent + "- switch: " + site, node_indent + "  names: [" + host.name + "]"});
  if (!model->FindSwitch(site)) {
    GRIDCAST_ASSIGN_OR_RETURN(const BlockList switches, FindBlockList(lines, "switches"));
    const std::string switch_indent(switches.indent, ' ');
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(switches.end),
                 {switch_indent + "- name: " + site, switch_indent + "  parent: " + root});
  }
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  Result<NetworkModel> added = ParseTopology(text);
  if (!added.ok()) return added.status().WithContext("the topology with " + host.name + " added");
  return text;
}

}  // namespace gridcast
