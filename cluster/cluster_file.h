// The cluster file: who the members are, where they listen, and the shared secret.
//
//   secret: 64 hex digits          # HMAC key for control calls and data handshakes (32 at least)
//   topology: topology.yaml        # optional; relative to this file; the network model
//   tls_ca: pki/ca.pem             # optional; relative to this file; the cluster's CA: clients
//                                  # and daemons verify TLS peers with it (--tls-ca overrides)
//   digest: xxh3                   # optional; the chunk digest of broadcasts sent to this
//                                  # cluster when the sender names none: sha256 (the default)
//                                  # or xxh3 (common/chunk_digest.h says what each proves)
//   members:
//     - name: lyon-0
//       control: unix:/run/gridcast/lyon-0.sock   # or host:port (gRPC)
//       data: 198.18.0.1:7701                    # host:port (raw TCP)
//       bt: 198.18.0.1:7702                      # optional, ip:port (BitTorrent);
//                                                # default: the data host, data port + 1
//
// Written by `gridcast cluster init` (client/cli/cluster_init.h) and `gridcast netgrid up
// --daemons`; read by gridcastd and every client command.
// Pure parsing (text in); thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/chunk_digest.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct ClusterMember {
  std::string name;
  std::string control_address;
  std::string data_address;
  std::string bt_address;
};

struct ClusterConfig {
  std::string secret;         // raw bytes (decoded from hex)
  std::string topology_path;  // absolute, or empty when the file names none
  std::string tls_ca_path;    // absolute, or empty when the file names none
  // The default chunk digest of sends to it (digest:); none named: sha256, or what the sender
  // chooses for its own kind of send (the MPI shim: docs/mpi.md).
  std::optional<ChunkDigest> digest;
  std::vector<ClusterMember> members;

  const ClusterMember* Find(std::string_view name) const;
  // The CA to verify the members' TLS certificates with: `flag` (a --tls-ca) when given, else
  // the file's tls_ca; empty means plaintext.
  std::string TlsCa(const std::string& flag) const { return flag.empty() ? tls_ca_path : flag; }
  // The chunk digest of a send: `flag` (a --digest, a SendOptions::digest) when given, else the
  // file's digest. InvalidArgument for a name no digest has.
  Result<ChunkDigest> DigestFor(const std::string& flag) const;
};

// `base_dir` resolves a relative topology path. Errors name the line and field.
Result<ClusterConfig> ParseClusterFile(std::string_view yaml_text, const std::string& base_dir);

// Reads and parses the file at `path`, relative paths in it resolved from its directory.
// Errors name the file.
Result<ClusterConfig> LoadClusterFile(const std::string& path);

std::string FormatClusterFile(const ClusterConfig& config);

// Whether `host` (of a host:port) is an IP address, IPv4 or IPv6, rather than a DNS name.
bool IsIpAddress(std::string_view host);

// A fresh secret for a cluster file (32 random bytes).
std::string NewClusterSecret();

// A warning when the file at `path` (which holds the cluster's secret) can be read or written
// by every user of the host; empty when only its owner and group can. For programs to print:
// the secret authenticates every control call and data connection of the cluster.
std::string SecretExposure(const std::string& path);

// Splits "host:port" (IPv4 or a name; "[v6]:port" too). InvalidArgument otherwise, and for port
// 0 unless `any_port` (a listener's "any free port"; a member's address always names its port).
Result<std::pair<std::string, uint16_t>> SplitHostPort(std::string_view address, bool any_port = false);

}  // namespace gridcast
