#include "client/send_summary.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "collectives/bound.h"
#include "collectives/plan.h"
#include "collectives/topology.h"
#include "common/file_io.h"
#include "common/hex.h"
#include "common/units.h"
#include "proto/plan_codec.h"
#include "proto/states.h"

namespace gridcast {

Result<SourceChoice> ChooseSource(const ClusterConfig& cluster, const std::string& requested, const ThisHost& here) {
  SourceChoice choice;
  if (!cluster.topology_path.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(cluster.topology_path));
    Result<NetworkModel> model = ParseTopology(text);
    if (!model.ok()) return model.status().WithContext(cluster.topology_path);
    choice.model = std::move(*model);
  }
  std::string name = requested;
  if (name.empty()) {
    if (Result<std::string> local = LocalMember(cluster, "", here, "--source"); local.ok()) name = *local;
  }
  if (name.empty()) {
    name = choice.model ? choice.model->nodes[choice.model->source].name : cluster.members.front().name;
  }
  choice.member = cluster.Find(name);
  if (choice.member == nullptr) return Status::InvalidArgument("source '" + name + "' is not in the cluster");
  return choice;
}

SendSummary Summarize(const v1::BroadcastProgress& last, const SourceChoice& source,
                      const Status& status) {
  SendSummary s;
  s.plan_id = ToHex(AsBytes(last.plan_id()));
  s.algorithm = last.algorithm();
  s.rationale = last.rationale();
  s.source = source.member->name;
  s.size_bytes = last.payload_bytes();
  s.chunk_bytes = last.chunk_bytes();
  s.lanes = last.lanes();
  // A daemon that did not say pushed (the only mode before pull): the proto's values are PlanMode's.
  const Result<PlanMode> mode = PlanModeFromProto(last.mode());
  s.mode = mode.ok() ? *mode : PlanMode::kPush;
  if (ModeHasSwarm(s.mode) && last.payload_bytes() > 0) {
    s.source_copies = double(last.source_uploaded_bytes()) / double(last.payload_bytes());
  }
  s.moved_bytes = last.moved_bytes();
  s.reused_bytes = last.reused_bytes();
  s.sha256 = ToHex(AsBytes(last.payload_sha256()));
  // A daemon that did not say ran SHA-256, the only chunk digest before the choice.
  Result<ChunkDigest> digest = ChunkDigestFromProto(last.digest());
  s.digest = digest.ok() ? *digest : ChunkDigest::kSha256;
  s.error = status.ok() ? last.error() : status.message();
  bool all_ok = status.ok() && last.finished() && last.error().empty();
  for (const v1::MemberProgress& m : last.members()) {
    MemberResult r{m.member(), m.state(), m.error(),
                   !m.chunk_list_sha256().empty() && m.chunk_list_sha256() == last.payload_chunk_list_sha256(),
                   m.finished_s()};
    all_ok = all_ok && r.digest_ok;
    s.transfer_s = std::max(s.transfer_s, r.finished_s);
    s.members.push_back(std::move(r));
  }
  s.verified = all_ok;
  for (const v1::Repair& r : last.repairs()) {
    const Result<RepairReason> reason = RepairReasonFromProto(r.reason());
    s.repairs.push_back({r.member(), r.at_s(), reason.ok() ? RepairReasonName(*reason) : "unknown", r.children_moved(),
                         std::vector<uint32_t>(r.lanes().begin(), r.lanes().end()), r.measured_bps(), r.expected_bps()});
  }
  if (last.has_control()) {
    const v1::ControlCounters& c = last.control();
    auto when = [](double seconds) { return seconds >= 0 ? std::optional<double>(seconds) : std::nullopt; };
    s.control = SendSummary::Control{c.rpcs_at_source(), c.bytes_at_source(), when(c.first_byte_s()),
                                     when(c.started_s())};
  }
  // A daemon that did not say when the broadcast started after the request (before the
  // counter) gives the transfer alone.
  s.completion_s = s.transfer_s > 0 && s.control && s.control->started_s ? *s.control->started_s + s.transfer_s
                                                                          : s.transfer_s;
  if (last.has_origin()) {
    const v1::OriginProgress& o = last.origin();
    s.origin = SendSummary::Origin{o.url(), o.bytes(), o.attempts(), o.resumed(), o.restarted(),
                                   o.fetched_s() >= 0 ? std::optional<double>(o.fetched_s()) : std::nullopt};
  }
  for (const v1::GatheredPart& p : last.parts()) s.parts.push_back({p.member(), p.name(), p.size_bytes(), p.offset()});
  if (source.model) {
    const NetworkModel& net = *source.model;
    std::vector<int> nodes;
    bool known = true;
    for (const MemberResult& r : s.members) {
      std::optional<int> node = net.FindNode(r.name);
      known = known && node.has_value();
      if (node) nodes.push_back(*node);
    }
    std::optional<int> src = net.FindNode(s.source);
    if (!s.parts.empty()) {
      std::vector<int> holders;
      std::vector<uint64_t> sizes;
      for (const BroadcastResult::Part& p : s.parts) {
        std::optional<int> node = net.FindNode(p.member);
        known = known && node.has_value();
        if (node) holders.push_back(*node);
        sizes.push_back(p.size_bytes);
      }
      if (known) s.bound_s = AllgatherBoundSeconds(net, holders, sizes);
    } else if (known && src) {
      s.bound_s = BroadcastBoundSeconds(net, *src, nodes, s.size_bytes);
    }
  }
  return s;
}

nlohmann::json SummaryJson(const SendSummary& s) {
  nlohmann::json members = nlohmann::json::array();
  for (const MemberResult& m : s.members) {
    members.push_back({{"name", m.name}, {"state", MemberStateText(m.state, m.error)}, {"digest_ok", m.digest_ok},
                       {"finished_s", m.finished_s}});
    if (!m.error.empty()) members.back()["error"] = m.error;
  }
  nlohmann::json j = {{"plan_id", s.plan_id},       {"algorithm", s.algorithm},
                      {"source", s.source},         {"size_bytes", s.size_bytes},
                      {"chunk_bytes", s.chunk_bytes}, {"lanes", s.lanes}, {"mode", PlanModeName(s.mode)},
                      {"completion_s", s.completion_s}, {"transfer_s", s.transfer_s},
                      {"rate_bps", s.completion_s > 0 ? 8.0 * double(s.size_bytes) / s.completion_s : 0.0},
                      {"sha256", s.sha256},         {"digest", DigestName(s.digest)},
                      {"moved_bytes", s.moved_bytes}, {"reused_bytes", s.reused_bytes},
                      {"verified", s.verified},
                      {"members", members}};
  nlohmann::json repairs = nlohmann::json::array();
  for (const RepairResult& r : s.repairs) {
    repairs.push_back({{"member", r.member}, {"at_s", r.at_s}, {"reason", r.reason},
                       {"children_moved", r.children_moved}, {"lanes", r.lanes}});
    if (r.reason == "slow") {
      repairs.back()["measured_bps"] = r.measured_bps;
      repairs.back()["expected_bps"] = r.expected_bps;
    }
  }
  j["repairs"] = std::move(repairs);
  j["bound_s"] = s.bound_s ? nlohmann::json(*s.bound_s) : nlohmann::json(nullptr);
  j["efficiency"] = s.bound_s && s.completion_s > 0 ? nlohmann::json(*s.bound_s / s.completion_s)
                                                    : nlohmann::json(nullptr);
  if (s.source_copies) j["source_copies"] = *s.source_copies;
  if (s.control) {
    j["control"] = {{"rpcs_at_source", s.control->rpcs_at_source},
                    {"bytes_at_source", s.control->bytes_at_source},
                    {"first_byte_s", s.control->first_byte_s ? nlohmann::json(*s.control->first_byte_s)
                                                             : nlohmann::json(nullptr)},
                    {"started_s", s.control->started_s ? nlohmann::json(*s.control->started_s) : nlohmann::json(nullptr)}};
  }
  if (s.inferred_topology_age_s) j["inferred_topology_age_s"] = *s.inferred_topology_age_s;
  if (s.origin) {
    j["origin"] = {{"url", s.origin->url},
                   {"bytes", s.origin->bytes},
                   {"attempts", s.origin->attempts},
                   {"resumed", s.origin->resumed},
                   {"restarted", s.origin->restarted},
                   {"fetched_s", s.origin->fetched_s ? nlohmann::json(*s.origin->fetched_s) : nlohmann::json(nullptr)}};
  }
  if (!s.parts.empty()) {
    nlohmann::json parts = nlohmann::json::array();
    for (const BroadcastResult::Part& p : s.parts) {
      parts.push_back({{"member", p.member}, {"name", p.name}, {"size_bytes", p.size_bytes}, {"offset", p.offset}});
    }
    j["parts"] = std::move(parts);
  }
  if (!s.rationale.empty()) j["rationale"] = s.rationale;
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

Observations ObservationsFromProgress(const v1::BroadcastProgress& last, const std::string& source) {
  Observations obs;
  obs.source = source;
  obs.payload_bytes = last.payload_bytes();
  obs.piece_bytes = last.chunk_bytes();
  obs.members.push_back({source, 0, 0, 0, true});
  for (const v1::MemberProgress& m : last.members()) {
    if (m.bin_s() > 0) obs.bin_s = m.bin_s();
    uint64_t received = 0;
    for (const v1::PeerReceipt& r : m.received()) {
      received += r.bytes();
      obs.pairs.push_back({r.from(), m.member(), r.bytes(), r.blocks(), r.first_s(), r.last_s(),
                           std::vector<uint64_t>(r.bytes_per_bin().begin(), r.bytes_per_bin().end())});
    }
    obs.members.push_back({m.member(), 0, m.finished_s(), received, m.state() == v1::MEMBER_STATE_DONE});
  }
  return obs;
}

void PrintSummary(const SendSummary& s) {
  if (s.plan_id.empty()) {  // refused before any plan was made: only why
    fmt::print("  error: {}\n  result     FAILED\n", s.error.empty() ? "no answer" : s.error);
    return;
  }
  if (!s.parts.empty()) {
    uint64_t gathered = 0;
    for (const BroadcastResult::Part& p : s.parts) gathered += p.size_bytes;
    fmt::print("\nallgather {} ({}): {} parts, {} in all, at {} members, {} chunks of {}\n", s.plan_id, s.algorithm,
               s.parts.size(), FormatSize(gathered), s.members.size(),
               s.chunk_bytes == 0 ? 0 : s.size_bytes / s.chunk_bytes, FormatSize(s.chunk_bytes));
  } else {
    fmt::print("\nbroadcast {} ({}): {} from {} to {} members, {} chunks of {}, {} lane(s)\n", s.plan_id,
             s.algorithm, FormatSize(s.size_bytes), s.source, s.members.size(),
             s.chunk_bytes == 0 ? 0 : (s.size_bytes + s.chunk_bytes - 1) / s.chunk_bytes,
             FormatSize(s.chunk_bytes), s.lanes);
  }
  if (!s.rationale.empty()) fmt::print("  why: {}\n", s.rationale);
  if (!s.topology_note.empty()) fmt::print("  topology   {}\n", s.topology_note);
  if (s.origin) {
    fmt::print("  origin     {}: {} in {} request(s), {} resumed{}{}\n", s.origin->url, FormatSize(s.origin->bytes),
               s.origin->attempts, s.origin->resumed,
               s.origin->restarted > 0 ? fmt::format(", {} restarted from zero", s.origin->restarted) : std::string(),
               s.origin->fetched_s ? fmt::format(", all in {:.3f} s after the request", *s.origin->fetched_s)
                                   : std::string());
  }
  if (s.source_copies) fmt::print("  source sent {:.3f} copies of the payload\n", *s.source_copies);
  if (!s.members.empty() && s.size_bytes > 0) {
    const double copies = double(s.size_bytes) * double(s.members.size());
    fmt::print("  moved      {} over the network ({:.1f}% of {} copies); {} reused from earlier copies ({:.1f}%)\n",
               FormatSize(s.moved_bytes), 100.0 * double(s.moved_bytes) / copies, s.members.size(),
               FormatSize(s.reused_bytes), 100.0 * double(s.reused_bytes) / copies);
  }
  for (const RepairResult& r : s.repairs) {
    fmt::print("  repaired   {} {} at {:.1f} s, {} {} moved in lane{} {}{}\n", r.member, r.reason, r.at_s, r.children_moved,
               r.children_moved == 1 ? "child" : "children", r.lanes.size() == 1 ? "" : "s", fmt::join(r.lanes, ", "),
               r.reason == "slow" ? fmt::format(" (it brought {:.1f} mbit/s where its child's other lanes came at {:.1f})",
                                                r.measured_bps / 1e6, r.expected_bps / 1e6)
                                  : "");
  }
  int ok = 0;
  for (const MemberResult& m : s.members) ok += m.digest_ok;
  // A wall time, rate and efficiency describe a broadcast that reached everyone; otherwise
  // only how far it got.
  if (s.completion_s > 0 && s.verified) {
    // Not FormatRate: it keeps every digit (it writes topologies); a reader wants a few.
    const double mbit_per_s = 8.0 * double(s.size_bytes) / s.completion_s / 1e6;
    const std::string rate = mbit_per_s >= 1000 ? fmt::format("{:.2f} gbit/s", mbit_per_s / 1000)
                                                : fmt::format("{:.1f} mbit/s", mbit_per_s);
    fmt::print("  wall time  {:.3f} s from the request{}\n  rate       {} per receiver\n", s.completion_s,
               s.completion_s > s.transfer_s
                   ? fmt::format(" ({:.3f} s before the start, the transfer {:.3f} s)", s.completion_s - s.transfer_s,
                                 s.transfer_s)
                   : std::string(),
               rate);
  } else if (s.completion_s > 0) {
    fmt::print("  finished   {} of {} members, the last of them after {:.3f} s\n", ok, s.members.size(), s.completion_s);
  }
  if (s.bound_s) {
    fmt::print("  bound      {:.3f} s (physical limit of the network model)\n", *s.bound_s);
    if (s.completion_s > 0 && s.verified) fmt::print("  efficiency {:.3f} (bound / time)\n", *s.bound_s / s.completion_s);
  }
  if (s.control) {
    fmt::print("  control    {} calls, {} at the source; first payload byte {}\n", s.control->rpcs_at_source,
               FormatSize(s.control->bytes_at_source),
               s.control->first_byte_s ? fmt::format("{:.3f} s after the request", *s.control->first_byte_s)
                                       : std::string("never sent"));
  }
  fmt::print("  digests    {} of {} members stored every chunk with the source's {} (payload SHA-256 {})\n", ok,
             s.members.size(), DigestAlgorithm(s.digest), s.sha256.substr(0, 16));
  for (const MemberResult& m : s.members) {
    if (!m.digest_ok) fmt::print("    {}: {}\n", m.name, MemberStateText(m.state, m.error));
  }
  if (!s.error.empty()) fmt::print("  error: {}\n", s.error);
  fmt::print("  result     {}\n", s.verified ? "OK: every member holds a verified copy" : "FAILED");
}

}  // namespace gridcast
