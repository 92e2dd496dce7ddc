#include "client/cluster_documents.h"

#include "common/hex.h"
#include "common/chunk_digest.h"
#include "proto/plan_codec.h"
#include "proto/states.h"

namespace gridcast {

Status VisitMembers(const ClusterConfig& cluster, const std::string& member, const std::string& tls_ca,
                    const std::function<void(const ClusterMember&, ControlClient&)>& visit) {
  if (!member.empty() && cluster.Find(member) == nullptr) {
    return Status::InvalidArgument("'" + member + "' is not in the cluster");
  }
  for (const ClusterMember& m : cluster.members) {
    if (!member.empty() && m.name != member) continue;
    ControlClient client(m.control_address, cluster.secret, {cluster.TlsCa(tls_ca), std::chrono::seconds(5)});
    visit(m, client);
  }
  return Status::Ok();
}

std::string MemberCallError(const ClusterMember& member, const ControlClient& client, const Status& failed) {
  if (client.Connected()) return member.name + ": " + failed.message();
  return NameUnreachable(failed, client, member.name, member.control_address).message();
}

nlohmann::json MemberStatusJson(const std::string& name, const v1::StatusResponse& response) {
  nlohmann::json plans = nlohmann::json::array();
  for (const v1::PlanStatus& plan : response.plans()) {
    plans.push_back({{"plan_id", ToHex(AsBytes(plan.plan_id()))},
                     {"name", plan.name()},
                     {"state", MemberStateText(plan.state())},
                     {"error", plan.error()},
                     {"chunks_done", plan.chunks_done()},
                     {"chunks_total", plan.chunks_total()},
                     {"is_source", plan.is_source()}});
  }
  nlohmann::json serves = nlohmann::json::array();
  for (const v1::ServeStatus& serve : response.serves()) {
    serves.push_back({{"serve_id", ToHex(AsBytes(serve.serve_id()))},
                      {"name", serve.name()},
                      {"address", serve.address()},
                      {"state", ServeStateText(serve.state())},
                      {"client_pieces", serve.client_pieces()},
                      {"pieces_total", serve.pieces_total()},
                      {"uploaded_bytes", serve.uploaded_bytes()}});
  }
  return {{"name", name}, {"plans", plans}, {"serves", serves}};
}

nlohmann::json MemberListJson(const std::string& name, const v1::ListResponse& response) {
  nlohmann::json payloads = nlohmann::json::array();
  for (const v1::HeldPayload& p : response.payloads()) {
    nlohmann::json entry = {{"name", p.name()},
                            {"size_bytes", p.size_bytes()},
                            {"complete", p.complete()},
                            {"in_memory", p.in_memory()},
                            {"chunks_verified", p.chunks_verified()},
                            {"chunks_total", p.chunks_total()}};
    if (!p.sha256().empty()) entry["sha256"] = ToHex(AsBytes(p.sha256()));
    if (Result<ChunkDigest> digest = ChunkDigestFromProto(p.digest()); p.digest() != v1::CHUNK_DIGEST_UNSPECIFIED && digest.ok()) {
      entry["digest"] = DigestName(*digest);
    }
    if (p.scrub() != v1::SCRUB_RESULT_UNSPECIFIED) {
      entry["verify"] = ScrubResultText(p.scrub(), p.scrub_error());
      entry["bad_chunks"] = std::vector<uint64_t>(p.bad_chunks().begin(), p.bad_chunks().end());
    }
    payloads.push_back(std::move(entry));
  }
  return {{"name", name}, {"data_dir", response.data_dir()}, {"memory_dir", response.memory_dir()},
          {"payloads", payloads}};
}

namespace {

// {"members": [...]}: each member's entry from `ask`, or its error.
Result<nlohmann::json> MembersDocument(
    const ClusterConfig& cluster, const std::string& member, const std::string& tls_ca,
    const std::function<Result<nlohmann::json>(const ClusterMember&, ControlClient&)>& ask) {
  nlohmann::json members = nlohmann::json::array();
  GRIDCAST_RETURN_IF_ERROR(VisitMembers(cluster, member, tls_ca, [&](const ClusterMember& m, ControlClient& client) {
    Result<nlohmann::json> entry = ask(m, client);
    members.push_back(entry.ok() ? *entry
                                 : nlohmann::json{{"name", m.name}, {"error", MemberCallError(m, client, entry.status())}});
  }));
  return nlohmann::json{{"members", members}};
}

}  // namespace

Result<nlohmann::json> StatusDocument(const ClusterConfig& cluster, const std::string& member,
                                      const std::string& tls_ca) {
  return MembersDocument(cluster, member, tls_ca, [](const ClusterMember& m, ControlClient& client) -> Result<nlohmann::json> {
    v1::StatusResponse response;
    GRIDCAST_RETURN_IF_ERROR(client.GetStatus(v1::StatusRequest(), &response));
    return MemberStatusJson(m.name, response);
  });
}

Result<nlohmann::json> ListDocument(const ClusterConfig& cluster, const std::string& member,
                                    const std::string& tls_ca, bool verify) {
  return MembersDocument(cluster, member, tls_ca, [verify](const ClusterMember& m, ControlClient& client) -> Result<nlohmann::json> {
    v1::ListRequest request;
    request.set_verify(verify);
    v1::ListResponse response;
    // A verification reads every payload: a day, not the client's few seconds.
    GRIDCAST_RETURN_IF_ERROR(client.List(&response, request, verify ? std::chrono::hours(24) : std::chrono::milliseconds(0)));
    return MemberListJson(m.name, response);
  });
}

bool DocumentReportsTrouble(const nlohmann::json& document) {
  for (const nlohmann::json& member : document.at("members")) {
    if (member.contains("error")) return true;
    for (const nlohmann::json& payload : member.value("payloads", nlohmann::json::array())) {
      if (!payload.value("bad_chunks", nlohmann::json::array()).empty()) return true;
    }
  }
  return false;
}

}  // namespace gridcast
