// A cluster's own certificate authority for TLS: one CA, and a certificate per member signed
// by it, valid for the member's hosts (its control and data addresses' names or IPs) and for
// both TLS roles (a daemon serves and dials on the data plane). ECDSA P-256 keys.
//
// Made by `gridcast cluster init --tls` (and add-host) for real clusters, and by `gridcast netgrid
// up --daemons --tls`; a site with its own PKI gives each gridcastd a certificate of its own
// instead (docs/daemon.md, "TLS").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "include/gridcast/status.h"

namespace gridcast {

struct PkiMember {
  std::string name;                // files NAME.pem and NAME.key
  std::vector<std::string> hosts;  // subjectAltName entries: DNS names or IP addresses
};

// Writes DIR/ca.pem and DIR/ca.key (the CA), and DIR/NAME.pem and DIR/NAME.key per member;
// keys are readable by the owner only. Certificates are valid from an hour ago for `days`.
Status WriteClusterPki(const std::filesystem::path& dir, const std::vector<PkiMember>& members, int days = 30);

// Writes DIR/NAME.pem and DIR/NAME.key for one more member, signed by the CA WriteClusterPki
// left in DIR. NotFound without it.
Status AddClusterPkiMember(const std::filesystem::path& dir, const PkiMember& member, int days = 30);

}  // namespace gridcast
