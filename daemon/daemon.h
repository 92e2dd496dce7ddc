// Daemon: wires gridcastd's layers together — the io thread (data plane), the participant,
// the coordinators and the gRPC server — and owns nothing else. Includes only what its
// options need: main.cc and the settings compile without the layers above the executor.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "include/gridcast/status.h"
#include "daemon/executor/plan_execution.h"
#include "daemon/pull/torrent_session.h"
#include "daemon/store/retention.h"
#include "daemon/transport/tcp/tcp_socket.h"

namespace gridcast {

struct DaemonOptions {
  std::string name;               // this member's name in the cluster file
  std::string data_dir;           // payloads live here; nothing is written outside it
  // In-memory payloads (BroadcastRequest.in_memory) live here; it is emptied when the daemon
  // starts and stops. Empty: /dev/shm/gridcast-<digest of data_dir>.
  std::string memory_dir;
  std::string control_address;    // gRPC: "unix:/path" or "host:port"
  std::string data_address;       // raw TCP: "ip:port"
  ClusterConfig cluster;          // members, secret, topology
  std::string cluster_path;       // the file it was read from, for messages
  std::vector<std::string> send_roots;
  ExecutionOptions execution;     // its transport is made by RunDaemon, TLS or plain TCP
  TcpOptions tcp;                 // the data connections' TCP settings
  unsigned workers = 0;           // threads hashing and writing chunks; 0 = one per core
  uint32_t control_fanout = 0;    // children per member in the control tree; 0 = the default (8)
  std::chrono::milliseconds stall_timeout{0};  // of broadcasts sent from here; 0 = the default (60 s)
  std::chrono::milliseconds member_lost_after{0};  // of broadcasts sent from here; 0 = the default (5 s)
  TorrentSessionOptions torrents;   // the BitTorrent session (pull and hybrid plans)
  std::string tls_cert;           // PEM; with tls_key enables TLS on the control port and data plane
  std::string tls_key;
  std::string tls_ca;             // PEM; verifies other daemons (their control ports, data connections)
  std::string metrics_address;    // "ip:port": Prometheus metrics at /metrics (metrics_exporter.h); empty: none
  RetentionPolicy data_retention;    // what the data directory lets go (store/retention.h)
  RetentionPolicy memory_retention;  // and the memory directory
  // The pages of removed in-memory payloads kept for the next ones (store/warm_memory.h), at
  // most this many bytes, each for at most warm_memory_idle unused; 0 keeps none.
  uint64_t warm_memory_bytes = uint64_t{1} << 30;
  std::chrono::seconds warm_memory_idle{600};
};

// Runs until SIGINT or SIGTERM. Errors: a port that cannot be bound, a bad data directory.
Status RunDaemon(const DaemonOptions& options);

// gridcastd --check-config: what RunDaemon would need, checked without changing anything or
// binding a port: the listen addresses' form, the data and memory directories (existing and
// writable, or creatable under a writable directory; a memory directory holding files that
// are not gridcast's is refused, as RunDaemon refuses it), the cluster's topology file, and the
// TLS certificate, key and CA. OK with one line describing the daemon it would run.
Result<std::string> CheckDaemonOptions(const DaemonOptions& options);

}  // namespace gridcast
