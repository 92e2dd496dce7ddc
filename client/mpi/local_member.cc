#include "client/mpi/local_member.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>

namespace gridcast {

Result<std::string> LocalMember(const ClusterConfig& cluster, const std::string& named,
                                const std::vector<std::string>& local_addresses) {
  if (!named.empty()) {
    if (cluster.Find(named) == nullptr) return Status::InvalidArgument("GRIDCAST_MEMBER '" + named + "' is not in the cluster file");
    return named;
  }
  std::vector<std::string> here;
  auto is_here = [&](const std::string& address) {
    Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(address);  // a unix socket is not
    return host_port.ok() &&
           std::find(local_addresses.begin(), local_addresses.end(), host_port->first) != local_addresses.end();
  };
  for (const ClusterMember& member : cluster.members) {
    if (is_here(member.control_address) || is_here(member.data_address) || is_here(member.bt_address)) {
      here.push_back(member.name);
    }
  }
  if (here.size() == 1) return here.front();
  if (here.empty()) {
    return Status::NotFound("no member of the cluster file has an address of this host: set GRIDCAST_MEMBER");
  }
  std::string names;
  for (const std::string& name : here) names += (names.empty() ? "" : ", ") + name;
  return Status::InvalidArgument("several members have an address of this host (" + names +
                                 "): set GRIDCAST_MEMBER to this rank's");
}

std::vector<std::string> HostAddresses() {
  std::vector<std::string> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return addresses;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const int family = entry->ifa_addr->sa_family;
    const void* address = nullptr;
    if (family == AF_INET) address = &reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr;
    if (family == AF_INET6) address = &reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr;
    if (address != nullptr && inet_ntop(family, address, text, sizeof(text)) != nullptr) addresses.emplace_back(text);
  }
  freeifaddrs(list);
  return addresses;
}

}  // namespace gridcast
