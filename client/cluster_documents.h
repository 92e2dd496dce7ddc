// What `gridcast status` and `gridcast list` ask every member's daemon, and the documents
// their --json prints: shared by the command and libgridcast (Client::StatusJson, ListJson).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "include/gridcast/result.h"

namespace gridcast {

// Calls `visit` with a client of every member's daemon in the cluster file's order, or of
// `member`'s alone when it is not empty (InvalidArgument when it is no member).
Status VisitMembers(const ClusterConfig& cluster, const std::string& member, const std::string& tls_ca,
                    const std::function<void(const ClusterMember&, ControlClient&)>& visit);

// A failed call to `member` as people read it: "member 'NAME' is unreachable at ADDRESS: ..."
// when its daemon never answered, else "NAME: <the daemon's answer>".
std::string MemberCallError(const ClusterMember& member, const ControlClient& client, const Status& failed);

// One member's entry of each document: {"name", ...} with its answer, or {"name", "error"}.
nlohmann::json MemberStatusJson(const std::string& name, const v1::StatusResponse& response);
nlohmann::json MemberListJson(const std::string& name, const v1::ListResponse& response);

// {"members": [entry, ...]}: `gridcast status --json`, `gridcast list --json` (with `verify`,
// every complete payload re-hashed: each entry's "verify" and "bad_chunks" say how it went).
Result<nlohmann::json> StatusDocument(const ClusterConfig& cluster, const std::string& member,
                                      const std::string& tls_ca);
Result<nlohmann::json> ListDocument(const ClusterConfig& cluster, const std::string& member,
                                    const std::string& tls_ca, bool verify);

// Whether a document's entries hold an error (a member unreachable, a bad chunk found): the
// command's exit code 1.
bool DocumentReportsTrouble(const nlohmann::json& document);

}  // namespace gridcast
