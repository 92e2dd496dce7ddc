// What `gridcastd --check-config` says of a member's TLS files before the daemon would fail on
// them (or, worse, start and be refused by every peer): each problem one line naming the file.
//
// A member's certificate must exist and parse, go with its key, chain to the cluster's CA,
// name every host the member is reached at (its control and data hosts: the control channel
// checks the control host too), and serve both TLS roles (a daemon accepts and dials: the
// extended key usage, when the certificate has one, includes serverAuth and clientAuth).
#pragma once

#include <string>
#include <vector>

namespace gridcast {

// Problems found, one line each; empty when there are none.
std::vector<std::string> CheckMemberCertificate(const std::string& cert_path, const std::string& key_path,
                                                const std::string& ca_path, const std::vector<std::string>& hosts);

}  // namespace gridcast
