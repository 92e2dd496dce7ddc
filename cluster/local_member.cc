#include "cluster/local_member.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <functional>

namespace gridcast {
namespace {

std::vector<std::string> MembersWhere(const ClusterConfig& cluster, const std::function<bool(const std::string&)>& is_here) {
  std::vector<std::string> here;
  for (const ClusterMember& member : cluster.members) {
    const std::string* addresses[] = {&member.control_address, &member.data_address, &member.bt_address};
    const bool found = std::any_of(std::begin(addresses), std::end(addresses), [&](const std::string* address) {
      Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(*address);  // a unix socket is not
      return host_port.ok() && is_here(host_port->first);
    });
    if (found) here.push_back(member.name);
  }
  return here;
}

// An IPv4 or IPv6 address as text; empty for another family.
std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* bytes = nullptr;
  if (address->sa_family == AF_INET) bytes = &reinterpret_cast<const sockaddr_in*>(address)->sin_addr;
  if (address->sa_family == AF_INET6) bytes = &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  return bytes != nullptr && inet_ntop(address->sa_family, bytes, text, sizeof text) != nullptr ? text : "";
}

}  // namespace

ThisHost CurrentHost() {
  ThisHost host;
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) == 0) host.host_name = name;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return host;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    if (std::string text = AddressText(entry->ifa_addr); !text.empty()) host.addresses.push_back(std::move(text));
  }
  freeifaddrs(list);
  return host;
}

bool IsAddressOfThisHost(const std::string& host, const ThisHost& here) {
  auto local = [&](const std::string& address) {
    return std::find(here.addresses.begin(), here.addresses.end(), address) != here.addresses.end();
  };
  if (host == "0.0.0.0" || host == "::" || host == here.host_name || local(host)) return true;
  addrinfo hints{};
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  bool any = false;
  for (const addrinfo* entry = found; entry != nullptr && !any; entry = entry->ai_next) {
    const std::string text = AddressText(entry->ai_addr);
    any = !text.empty() && local(text);
  }
  freeaddrinfo(found);
  return any;
}

Result<std::string> LocalMember(const ClusterConfig& cluster, const std::string& named, const ThisHost& host,
                                const std::string& how) {
  if (!named.empty()) {
    if (cluster.Find(named) == nullptr) return Status::InvalidArgument(how + " '" + named + "' is not in the cluster file");
    return named;
  }
  std::vector<std::string> here = MembersWhere(cluster, [&](const std::string& address) {
    return std::find(host.addresses.begin(), host.addresses.end(), address) != host.addresses.end();
  });
  // By name only where no address says it: netgrid's namespaces share one host name.
  if (here.empty() && !host.host_name.empty()) {
    const std::string label = host.host_name.substr(0, host.host_name.find('.'));
    here = MembersWhere(cluster, [&](const std::string& address) { return address == host.host_name; });
    if (here.empty() && cluster.Find(label) != nullptr) here.push_back(label);
  }
  if (here.size() == 1) return here.front();
  if (here.empty()) {
    return Status::NotFound("no member of the cluster file has an address or the name of this host (" +
                            host.host_name + "): set " + how);
  }
  std::string names;
  for (const std::string& name : here) names += (names.empty() ? "" : ", ") + name;
  return Status::InvalidArgument("several members have an address of this host (" + names + "): set " + how);
}

}  // namespace gridcast
