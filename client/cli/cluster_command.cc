#include "client/cli/cluster_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "client/cli/cli_util.h"
#include "client/cli/tomography_args.h"
#include "client/cli/tomography_command.h"
#include "client/cluster_documents.h"
#include "client/send_summary.h"
#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "collectives/topology.h"
#include "common/hex.h"
#include "common/origin_url.h"
#include "common/safe_path.h"
#include "common/units.h"
#include "proto/plan_codec.h"
#include "proto/states.h"

namespace gridcast::cli {
namespace {

namespace fs = std::filesystem;

struct ClusterArgs {
  std::string cluster;
  std::string path;
  std::string algo = "auto";
  std::string chunk;
  std::string to;
  std::string source;
  std::string name;
  int streams = 0;
  double timeout_s = 0;
  double stall_timeout_s = 0;
  bool json = false;
  std::optional<PlanMode> mode;  // unset: the source daemon decides
  std::string observations;
  std::string plan_id;
  std::string tls_ca;
  bool retomograph = false;
  bool verify = false;
  bool in_memory = false;
  std::string member;  // status, list, remove: ask only this member
  std::vector<std::string> parts;  // allgather: NODE=PATH
  std::string parts_dir;           // allgather: DIR/NODE at every member
  std::string via;                 // allgather: the member asked to coordinate
  std::string digest;              // send, allgather: empty = the cluster file's (default sha256)
  bool no_reuse = false;           // send: members take nothing from earlier copies
  std::string base;                // send: the earlier copy members search (a name)
  OriginArgs origin;                 // send URL: --header, --ca, --sha256, --size-limit
};

// The request's payload: a URL the source fetches (with its headers, CA and limit), or a file
// or directory the source reads.
Status SetPayload(const ClusterArgs& args, v1::BroadcastRequest* request) {
  if (!IsHttpUrl(args.path)) {
    if (!args.origin.empty()) {
      return Status::InvalidArgument("--header, --ca, --sha256 and --size-limit are for a payload at an http(s) URL");
    }
    std::error_code ec;
    const std::filesystem::path payload = std::filesystem::absolute(args.path, ec);
    if (!std::filesystem::is_regular_file(payload, ec) && !std::filesystem::is_directory(payload, ec)) {
      return Status::InvalidArgument("payload " + args.path + " is not a readable file or directory");
    }
    request->set_payload_path(payload.string());
    return Status::Ok();
  }
  v1::OriginSource* origin = request->mutable_origin();
  origin->set_url(args.path);
  for (const std::string& header : OriginHeaders(args.origin)) origin->add_headers(header);
  if (!args.origin.ca.empty()) {
    std::ifstream in(args.origin.ca, std::ios::binary);
    std::string pem((std::istreambuf_iterator<char>(in)), {});
    if (pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return Status::InvalidArgument("--ca: " + args.origin.ca + " is not readable or holds no PEM certificate");
    }
    origin->set_ca_pem(std::move(pem));
  }
  if (!args.origin.sha256.empty()) {
    Result<std::string> digest = FromHexOfSize(args.origin.sha256, 32);
    if (!digest.ok()) return digest.status().WithContext("--sha256");
    origin->set_sha256(std::move(*digest));
  }
  if (!args.origin.size_limit.empty()) {
    Result<uint64_t> limit = ParseSizeBytes(args.origin.size_limit);
    if (!limit.ok() || *limit == 0) return Status::InvalidArgument("--size-limit: expected a size such as 500GiB");
    origin->set_size_limit(*limit);
  }
  return Status::Ok();  // the source daemon checks the rest (request_checks.h CheckOriginSource)
}

// The topology `gridcast tomography` last inferred for this cluster file, with its age; none
// when it never ran (or its file is unusable: then a warning says why).
struct InferredTopology {
  std::string yaml;
  double age_s = 0;
  std::string path;
};

std::optional<InferredTopology> CachedTopology(const std::string& cluster_file, const ClusterConfig& cluster) {
  const fs::path path = TomographyCachePath(cluster_file);
  std::error_code ec;
  const auto written = fs::last_write_time(path, ec);
  if (ec) return std::nullopt;
  auto ignore = [&](const std::string& problem) -> std::optional<InferredTopology> {
    fmt::print(stderr, "gridcast: ignoring the inferred topology {}: {} (run gridcast tomography again)\n",
               path.string(), problem);
    return std::nullopt;
  };
  Result<std::string> yaml = ReadTextFile(path);
  if (!yaml.ok()) return ignore(yaml.status().message());
  Result<NetworkModel> model = ParseTopology(*yaml);
  if (!model.ok()) return ignore(model.status().message());
  for (const ClusterMember& m : cluster.members) {
    if (!model->FindNode(m.name)) return ignore("it has no node '" + m.name + "'");
  }
  const double age_s = std::chrono::duration<double>(fs::file_time_type::clock::now() - written).count();
  return InferredTopology{std::move(*yaml), age_s, path.string()};
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

// A bar like "[#######.......]" of `width` cells.
std::string Bar(double fraction, int width) {
  const int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

// While a broadcast runs its progress messages sum the members up and name only those that
// need attention (the last message lists them all): one line for all, one per named member.
void ShowProgress(const v1::BroadcastProgress& p, bool terminal, size_t* lines_drawn, double* last_log_s) {
  const uint64_t chunks = p.chunk_bytes() == 0 ? 0 : (p.payload_bytes() + p.chunk_bytes() - 1) / p.chunk_bytes();
  const uint64_t total = chunks * p.members_total();
  const double fraction = total == 0 ? 1.0 : double(p.chunks_done_total()) / double(total);
  const std::string slowest =
      p.slowest_member().empty() ? "" : fmt::format(", slowest {} ({} chunks)", p.slowest_member(), p.slowest_chunks());
  if (terminal) {
    if (*lines_drawn > 0) fmt::print("\x1b[{}A\x1b[J", *lines_drawn);  // back to the top, clear below
    fmt::print("\x1b[2K{:<16} {} {:5.1f}% {}/{} members done{}\n", "all", Bar(fraction, 30), 100 * fraction,
               p.members_done(), p.members_total(), slowest);
    size_t lines = 1;
    for (const v1::MemberProgress& m : p.members()) {
      for (const v1::LaneTrouble& trouble : m.lane_trouble()) {
        fmt::print("\x1b[2K{:<16} {}\n", m.member(), LaneTroubleText(trouble));
        ++lines;
      }
      if (m.state() == v1::MEMBER_STATE_DONE || m.state() == v1::MEMBER_STATE_RUNNING) continue;  // the last message lists everyone
      fmt::print("\x1b[2K{:<16} {}\n", m.member(), MemberStateText(m.state(), m.error()));
      ++lines;
    }
    *lines_drawn = lines;
    std::fflush(stdout);
    return;
  }
  if (p.elapsed_s() - *last_log_s < 1.0 && !p.finished()) return;
  *last_log_s = p.elapsed_s();
  fmt::print("{:7.1f}s  {:5.1f}%  {}/{} members done{}\n", p.elapsed_s(), 100.0 * fraction, p.members_done(),
             p.members_total(), slowest);
  std::fflush(stdout);
}

using ProgressFn = std::function<void(const v1::BroadcastProgress&)>;

// Runs `call` (a Broadcast or an Allgather at one daemon) with the command's timeout, drawing
// its progress unless --json; returns the last progress message, and the call's status.
v1::BroadcastProgress RunWithProgress(const ClusterArgs& args,
                                      const std::function<Status(std::chrono::milliseconds, const ProgressFn&)>& call,
                                      Status* status) {
  const bool terminal = !args.json && isatty(STDOUT_FILENO);
  size_t lines = 0;
  double last_log = -1;
  v1::BroadcastProgress last;
  const double timeout_s = args.timeout_s > 0 ? args.timeout_s + 60 : 86400 * 7;
  *status = call(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)), [&](const v1::BroadcastProgress& p) {
    last = p;
    if (!args.json) ShowProgress(p, terminal, &lines, &last_log);
  });
  return last;
}

// The summary, as JSON or for people; the exit code says whether every member verified.
int FinishWithSummary(const ClusterArgs& args, const SendSummary& summary, const Status& status) {
  if (args.json) {
    fmt::print("{}\n", SummaryJson(summary).dump(2));
  } else {
    PrintSummary(summary);
  }
  if (!status.ok()) return kExitFailure;
  return summary.verified ? kExitOk : kExitFailure;
}

// --chunk: a positive size, or 0 when not given.
Result<uint64_t> ChunkOption(const std::string& text) {
  if (text.empty()) return uint64_t{0};
  Result<uint64_t> chunk = ParseSizeBytes(text);
  if (!chunk.ok() || *chunk == 0) {
    return Status::InvalidArgument("--chunk: " + (chunk.ok() ? "must be positive" : chunk.status().message()));
  }
  return chunk;
}

// What a send and an allgather request take alike from the command line.
template <typename Request>
Status SetSharedOptions(const ClusterArgs& args, const ClusterConfig& cluster, Request* request) {
  request->set_name(args.name);
  request->set_algorithm(args.algo);
  request->set_in_memory(args.in_memory);
  request->set_streams(static_cast<uint32_t>(std::max(args.streams, 0)));
  request->set_timeout_s(args.timeout_s);
  request->set_stall_timeout_s(args.stall_timeout_s);
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, cluster.DigestFor(args.digest));
  request->set_digest(ChunkDigestToProto(digest));
  GRIDCAST_ASSIGN_OR_RETURN(const uint64_t chunk, ChunkOption(args.chunk));
  request->set_chunk_bytes(chunk);
  return Status::Ok();
}

int Send(const ClusterArgs& args) {
  Result<ClusterConfig> cluster = LoadCluster(args.cluster);
  if (!cluster.ok()) return ReportError(cluster.status());
  v1::BroadcastRequest request;
  if (Status payload = SetPayload(args, &request); !payload.ok()) return ReportError(payload);
  if (Status common = SetSharedOptions(args, *cluster, &request); !common.ok()) return ReportError(common);
  for (const std::string& member : SplitComma(args.to)) {
    if (cluster->Find(member) == nullptr) {
      return ReportError(Status::InvalidArgument("--to: '" + member + "' is not in the cluster"));
    }
    request.add_members(member);
  }
  request.set_mode(args.mode ? PlanModeToProto(*args.mode) : v1::PLAN_MODE_UNSPECIFIED);
  request.set_no_reuse(args.no_reuse);
  if (!args.base.empty()) {
    if (Status base = CheckPayloadName(args.base); !base.ok()) return ReportError(base.WithContext("--base"));
    if (args.no_reuse) return ReportError(Status::InvalidArgument("--base searches an earlier copy: not with --no-reuse"));
    request.set_base(args.base);
  }
  if (!args.observations.empty() && (!args.mode || !ModeHasSwarm(*args.mode))) {
    return ReportError(Status::InvalidArgument("--observations needs --mode pull or hybrid"));
  }

  // A network nobody described: plan `auto` on what tomography inferred, when it ran.
  std::optional<InferredTopology> inferred;
  if (args.retomograph && (args.algo != "auto" || !cluster->topology_path.empty())) {
    return ReportError(Status::InvalidArgument("--retomograph needs --algo auto and a cluster file without a topology"));
  }
  if (args.algo == "auto" && cluster->topology_path.empty()) {
    if (args.retomograph) {
      Result<std::string> yaml = RetomographCluster(args.cluster, args.tls_ca);
      if (!yaml.ok()) return ReportError(yaml.status().WithContext("--retomograph"));
      inferred = InferredTopology{std::move(*yaml), 0, TomographyCachePath(args.cluster).string()};
    } else {
      inferred = CachedTopology(args.cluster, *cluster);
    }
    if (inferred) request.set_topology_yaml(inferred->yaml);
  }

  Result<SourceChoice> source = ChooseSource(*cluster, args.source);
  if (!source.ok()) return ReportError(source.status());
  ControlClient client(source->member->control_address, cluster->secret, {cluster->TlsCa(args.tls_ca)});
  Status status;
  const v1::BroadcastProgress last = RunWithProgress(
      args, [&](auto timeout, const ProgressFn& on_progress) { return client.Broadcast(request, timeout, on_progress); },
      &status);
  SendSummary summary = Summarize(last, *source, status);
  if (inferred) {
    summary.inferred_topology_age_s = inferred->age_s;
    summary.topology_note = "inferred by gridcast tomography " + FormatAge(inferred->age_s) + " ago (" + inferred->path + ")";
  }
  // Also when members were lost (hybrid): the survivors' observations are complete.
  if (!args.observations.empty() && last.finished() && last.members_size() > 0) {
    const Observations observations = ObservationsFromProgress(last, source->member->name);
    if (Status valid = ValidateObservations(observations); !valid.ok()) {
      return ReportError(valid.WithContext("the daemons' observations"));
    }
    std::ofstream out(args.observations);
    out << ObservationsToJson(observations) << "\n";
    if (!out) return ReportError(Status::Internal("cannot write " + args.observations));
  }
  return FinishWithSummary(args, summary, status);
}

int Allgather(const ClusterArgs& args) {
  Result<ClusterConfig> cluster = LoadCluster(args.cluster);
  if (!cluster.ok()) return ReportError(cluster.status());
  v1::AllgatherRequest request;
  if (Status common = SetSharedOptions(args, *cluster, &request); !common.ok()) return ReportError(common);
  if (args.parts.empty() == args.parts_dir.empty()) {
    return ReportError(Status::InvalidArgument("give the parts with --part NODE=PATH (one per member) or --parts-dir DIR"));
  }
  for (const std::string& spec : args.parts) {
    const size_t equals = spec.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size()) {
      return ReportError(Status::InvalidArgument("--part: expected NODE=PATH, not '" + spec + "'"));
    }
    const std::string member = spec.substr(0, equals);
    if (cluster->Find(member) == nullptr) {
      return ReportError(Status::InvalidArgument("--part: '" + member + "' is not in the cluster"));
    }
    v1::AllgatherPart* part = request.add_parts();
    part->set_member(member);
    part->set_path(spec.substr(equals + 1));
  }
  if (!args.parts_dir.empty()) {
    for (const ClusterMember& m : cluster->members) {
      v1::AllgatherPart* part = request.add_parts();
      part->set_member(m.name);
      part->set_path((std::filesystem::path(args.parts_dir) / m.name).string());
    }
  }
  Result<SourceChoice> via = ChooseSource(*cluster, args.via.empty() ? request.parts(0).member() : args.via);
  if (!via.ok()) return ReportError(via.status());
  ControlClient client(via->member->control_address, cluster->secret, {cluster->TlsCa(args.tls_ca)});
  Status status;
  const v1::BroadcastProgress last = RunWithProgress(
      args, [&](auto timeout, const ProgressFn& on_progress) { return client.Allgather(request, timeout, on_progress); },
      &status);
  return FinishWithSummary(args, Summarize(last, *via, status), status);
}

// The line of a member whose call failed: named unreachable when its daemon never answered.
std::string MemberError(const ClusterMember& member, const ControlClient& client, const Status& failed) {
  return "error: " + MemberCallError(member, client, failed);
}

// Calls `action` for every member's daemon (or only --member's) and prints one line per member.
int ForEachMember(const ClusterArgs& args,
                  const std::function<std::string(const ClusterMember&, ControlClient&)>& action) {
  Result<ClusterConfig> cluster = LoadCluster(args.cluster);
  if (!cluster.ok()) return ReportError(cluster.status());
  int code = kExitOk;
  const Status visited = VisitMembers(*cluster, args.member, args.tls_ca, [&](const ClusterMember& member, ControlClient& client) {
    std::string line = action(member, client);
    if (line.rfind("error:", 0) == 0) code = kExitFailure;
    fmt::print("{}\n", line);
  });
  return visited.ok() ? code : ReportError(visited.WithContext("--member"));
}

// status and list: the document `make` builds, as JSON with --json, else each member's entry as
// `describe` writes it for people (an unreachable member's as "error: ..."); exit code 1 when
// the document reports trouble.
int PrintMembers(const ClusterArgs& args, const std::function<Result<nlohmann::json>(const ClusterConfig&)>& make,
                 const std::function<std::string(const nlohmann::json&)>& describe) {
  Result<ClusterConfig> cluster = LoadCluster(args.cluster);
  if (!cluster.ok()) return ReportError(cluster.status());
  Result<nlohmann::json> document = make(*cluster);
  if (!document.ok()) return ReportError(document.status().WithContext("--member"));
  if (args.json) {
    fmt::print("{}\n", document->dump(2));
  } else {
    for (const nlohmann::json& entry : document->at("members")) {
      fmt::print("{}\n", entry.contains("error") ? "error: " + entry.at("error").get<std::string>() : describe(entry));
    }
  }
  return DocumentReportsTrouble(*document) ? kExitFailure : kExitOk;
}

// "done", or "failed: <error>": as MemberStateText.
std::string StateText(const nlohmann::json& entry) {
  const std::string error = entry.value("error", "");
  return entry.at("state").get<std::string>() + (error.empty() ? "" : ": " + error);
}

int StatusCommand(const ClusterArgs& args) {
  return PrintMembers(
      args, [&](const ClusterConfig& c) { return StatusDocument(c, args.member, args.tls_ca); },
      [](const nlohmann::json& member) {
        const nlohmann::json& plans = member.at("plans");
        std::string line = fmt::format("{:<16} {} plan(s)", member.at("name").get<std::string>(), plans.size());
        for (const nlohmann::json& plan : plans) {
          line += fmt::format("\n  {} {:<12} {}/{} chunks{}", plan.at("plan_id").get<std::string>(), StateText(plan),
                              plan.at("chunks_done").get<uint64_t>(), plan.at("chunks_total").get<uint64_t>(),
                              plan.at("is_source").get<bool>() ? " (source)" : "");
        }
        for (const nlohmann::json& serve : member.at("serves")) {
          line += fmt::format("\n  {} serving {} to {}: {}, {}/{} pieces", serve.at("serve_id").get<std::string>(),
                              serve.at("name").get<std::string>(), serve.at("address").get<std::string>(),
                              serve.at("state").get<std::string>(), serve.at("client_pieces").get<uint64_t>(),
                              serve.at("pieces_total").get<uint64_t>());
        }
        return line;
      });
}

// With --verify every member re-hashes each complete payload against its recorded chunk
// list; a bad chunk anywhere makes the exit code 1 (an "error:" line names it).
int ListCommand(const ClusterArgs& args) {
  return PrintMembers(
      args, [&](const ClusterConfig& c) { return ListDocument(c, args.member, args.tls_ca, args.verify); },
      [](const nlohmann::json& member) {
        const std::string name = member.at("name").get<std::string>();
        const nlohmann::json& payloads = member.at("payloads");
        std::string line = fmt::format("{:<16} {} payload(s)", name, payloads.size());
        std::string bad;
        for (const nlohmann::json& p : payloads) {
          line += fmt::format("\n  {:<32} {:>10} {}{}", p.at("name").get<std::string>(),
                              FormatSize(p.at("size_bytes").get<uint64_t>()),
                              p.at("complete").get<bool>() ? "complete" : "partial",
                              p.at("in_memory").get<bool>() ? " (in memory)" : "");
          if (p.contains("digest")) line += ", chunks " + p.at("digest").get<std::string>();
          if (p.contains("verify")) line += ", verify: " + p.at("verify").get<std::string>();
          const std::vector<uint64_t> bad_chunks = p.value("bad_chunks", std::vector<uint64_t>{});
          if (bad_chunks.empty()) continue;
          std::string chunks;
          for (uint64_t c : bad_chunks) chunks += (chunks.empty() ? "" : ",") + std::to_string(c);
          line += fmt::format(" ({} of {} chunks: {})", bad_chunks.size(), p.at("chunks_total").get<uint64_t>(), chunks);
          bad += fmt::format("\nerror: {}: {} has {} bad chunk(s): {}", name, p.at("name").get<std::string>(),
                             bad_chunks.size(), chunks);
        }
        return bad.empty() ? line : "error: " + name + ": bad chunks found\n" + line + bad;
      });
}

int CancelCommand(const ClusterArgs& args) {
  Result<std::string> id = FromHex(args.plan_id);
  if (!id.ok() || id->size() != 16) {
    return ReportError(Status::InvalidArgument("plan or serve id must be 32 hex digits (see gridcast status)"));
  }
  return ForEachMember(args, [&](const ClusterMember& member, ControlClient& client) {
    v1::CancelRequest request;
    request.set_plan_id(*id);
    request.set_reason("cancelled by the user");
    Status s = client.Cancel(request);
    if (s.code() == StatusCode::kNotFound) return member.name + ": not taking part";
    if (!s.ok()) return MemberError(member, client, s);
    return member.name + ": cancelled";
  });
}

// Members that do not hold the payload say so and are no error: removing is idempotent.
int RemoveCommand(const ClusterArgs& args) {
  int removed = 0;
  const int code = ForEachMember(args, [&](const ClusterMember& member, ControlClient& client) {
    v1::RemoveRequest request;
    request.set_name(args.name);
    request.set_in_memory(args.in_memory);
    Status s = client.Remove(request);
    if (s.code() == StatusCode::kNotFound) return member.name + ": not held";
    if (!s.ok()) return MemberError(member, client, s);
    ++removed;
    return member.name + ": removed";
  });
  if (code == kExitOk) fmt::print("{} removed at {} member(s)\n", args.name, removed);
  return code;
}

}  // namespace

// Stays whole: the cluster commands and their flags in one place, in the order --help lists them.
void AddClusterCommands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ClusterArgs>();
  auto add_common = [args](CLI::App* command) {
    AddClusterFileOption(command, &args->cluster, "Cluster file (netgrid up --daemons writes STATE/cluster.yaml)");
    command->add_option("--tls-ca", args->tls_ca, "PEM CA when the daemons serve TLS (default: the cluster file's tls_ca)");
  };

  CLI::App* send = app.add_subcommand(
      "send", "Broadcast a file or directory from a source daemon to the cluster");
  send->add_option("path", args->path,
                   "The file or directory (inside the source daemon's data directory or send roots; a directory "
                   "arrives as NAME/), or an http:// or https:// URL the source daemon fetches while it sends "
                   "(docs/origin.md)")
      ->required();
  add_common(send);
  send->add_option("--algo", args->algo, "Planner name or auto (default auto)");
  send->add_option("--chunk", args->chunk, "Chunk size, e.g. 1MiB (default: the planner's)");
  send->add_option("--to", args->to, "Receivers, comma-separated (default: every member)");
  send->add_option("--source", args->source, "Source member (default: the member on this host, else the topology's source, else the first)");
  send->add_option("--name", args->name, "Name at the receivers (default: the file's name, or the URL's last path component)");
  send->add_option("--streams", args->streams, "Parallel TCP streams per edge (default: the planner's)");
  send->add_option("--timeout", args->timeout_s, "Seconds for the whole broadcast (default: from the size)");
  send->add_option("--stall-timeout", args->stall_timeout_s,
                   "Seconds without a new verified chunk at any member before the send fails naming "
                   "the members not done (default: the source daemon's, 60; raise it when one chunk takes longer "
                   "to cross the slowest link)");
  send->add_flag("--json", args->json, "Print the summary as JSON");
  send->add_option("--digest", args->digest, kDigestHelp);
  send->add_flag("--no-reuse", args->no_reuse,
                 "Members take nothing from an earlier copy of the payload they hold (by default each receives "
                 "only the chunks it does not find in it; docs/delta.md)");
  send->add_option("--base", args->base,
                   "The earlier copy receivers search instead of the one under the payload's name: a name below their "
                   "data directory (memory directory with --in-memory), e.g. another version kept as data-v1.bin");
  send->add_flag("--in-memory", args->in_memory,
                 "Receivers keep the payload in memory (their daemon's memory directory, a tmpfs), not on disk");
  AddOriginOptions(send, &args->origin);
  AddPlanModeOption(send, &args->mode,
                   "push (trees), pull (BitTorrent swarm) or hybrid (push, pull repairs); default: push, or "
                   "hybrid for auto when the cluster file names no topology and tomography inferred none");
  send->add_option("--observations", args->observations,
                   "Pull/hybrid: write who sent how much to whom, and when, as JSON (tomography's input)");
  send->add_flag("--retomograph", args->retomograph,
                 "auto without a topology in the cluster file: run gridcast tomography first (else the latest "
                 "inferred topology is used when there is one)");
  send->callback([args, exit_code] { *exit_code = Send(*args); });

  CLI::App* allgather = app.add_subcommand(
      "allgather", "Every member contributes a part and ends with all parts, in NAME/ (docs/allgather.md)");
  add_common(allgather);
  allgather->add_option("--part", args->parts,
                        "NODE=PATH, once per member taking part: PATH at NODE, relative to its data directory or "
                        "inside its data or memory directory or a send root");
  allgather->add_option("--parts-dir", args->parts_dir, "Every member's part is DIR/<its name> at that member");
  allgather->add_option("--name", args->name, "Every member ends with the directory NAME/ (one file per member)")
      ->required();
  allgather->add_option("--algo", args->algo,
                        "All-to-all planner: ring, prefix-send, kprefix:K, kshift:K, mesh2d, hypercube or auto "
                        "(default auto: the fastest by simulation)");
  allgather->add_option("--chunk", args->chunk, "Chunk size, e.g. 256KiB (default: from the parts' sizes)");
  allgather->add_option("--streams", args->streams, "Parallel TCP streams per edge");
  allgather->add_option("--via", args->via, "The member that coordinates (default: the first part's)");
  allgather->add_option("--timeout", args->timeout_s, "Seconds for the whole allgather (default: from the size)");
  allgather->add_option("--stall-timeout", args->stall_timeout_s,
                        "Seconds without a new verified chunk anywhere before it fails (default 60)");
  allgather->add_flag("--in-memory", args->in_memory,
                      "Members keep the gathered parts whole in memory as NAME (their memory directory)");
  allgather->add_flag("--json", args->json, "Print the summary as JSON");
  allgather->add_option("--digest", args->digest, kDigestHelp);
  allgather->callback([args, exit_code] { *exit_code = Allgather(*args); });

  CLI::App* status = app.add_subcommand("status", "Broadcasts in progress at every member");
  add_common(status);
  status->add_option("--member", args->member, "Ask only this member, directly");
  status->add_flag("--json", args->json,
                   "Print {\"members\": [...]}: each member's plans and serves, or its error (exit code 1 then)");
  status->callback([args, exit_code] { *exit_code = StatusCommand(*args); });

  CLI::App* list = app.add_subcommand("list", "Payloads every member holds");
  add_common(list);
  list->add_option("--member", args->member, "Ask only this member, directly");
  list->add_flag("--verify", args->verify,
                 "Re-hash every complete payload against the chunk hashes it was received with and name each "
                 "bad chunk (reads everything; exit code 1 when a chunk is bad)");
  list->add_flag("--json", args->json,
                 "Print {\"members\": [...]}: each member's directories and payloads, or its error (exit code 1 then)");
  list->callback([args, exit_code] { *exit_code = ListCommand(*args); });

  CLI::App* remove = app.add_subcommand("remove", "Remove a payload from every member (or one): a file, a directory, "
                                                  "or what an interrupted broadcast left");
  remove->add_option("name", args->name, "The payload's name at the members (as gridcast list shows it)")->required();
  add_common(remove);
  remove->add_option("--member", args->member, "Remove it at this member only");
  remove->add_flag("--in-memory", args->in_memory, "The copy in the members' memory directories, not their data directories");
  remove->callback([args, exit_code] { *exit_code = RemoveCommand(*args); });

  CLI::App* cancel = app.add_subcommand("cancel", "Cancel a broadcast (or a serve-to) everywhere");
  cancel->add_option("plan", args->plan_id, "Plan or serve id (32 hex digits, from gridcast status)")->required();
  add_common(cancel);
  cancel->callback([args, exit_code] { *exit_code = CancelCommand(*args); });
}

}  // namespace gridcast::cli
