#include "daemon/coordinator/broadcast_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <optional>
#include <sstream>

#include "collectives/broadcast_mode.h"
#include "collectives/validate_plan.h"
#include "collectives/registry.h"
#include "collectives/simulator/simulator.h"
#include "collectives/topology.h"
#include "common/file_io.h"
#include "common/hex.h"
#include "daemon/coordinator/broadcast_follower.h"
#include "daemon/coordinator/plan_repairer.h"
#include "daemon/participant/plan_payload.h"
#include "daemon/participant/request_checks.h"
#include "proto/plan_codec.h"
#include "proto/states.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// A duration from a request, already checked to be finite and at most kMaxRequestSeconds.
std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}


// A network model over exactly the members when the cluster file names no topology: one
// switch and equal NICs. The rate is an assumption; only ratios matter to the planners, and
// unshaped (infinite) rates would make every plan look instantaneous to `auto`.
NetworkModel FlatModel(const std::vector<std::string>& members) {
  constexpr double kAssumedNicBps = 1e9;
  NetworkModel net;
  net.name = "cluster";
  net.switches.push_back(Switch{"cluster-switch", -1});
  for (const std::string& name : members) net.nodes.push_back(Node{name, 0, kAssumedNicBps, kAssumedNicBps});
  return net;
}

}  // namespace

Result<NetworkModel> LoadBroadcastModel(const ClusterConfig& cluster, const std::string& topology_yaml,
                                        const std::vector<std::string>& members) {
  if (!topology_yaml.empty()) {
    if (topology_yaml.size() > kMaxTopologyYamlBytes) {
      return Status::InvalidArgument("topology_yaml is larger than 1 MiB");
    }
    Result<NetworkModel> model = ParseTopology(topology_yaml);
    if (!model.ok()) return model.status().WithContext("the request's topology");
    for (const std::string& m : members) {
      if (!model->FindNode(m)) return Status::InvalidArgument("member '" + m + "' is not a node of the request's topology");
    }
    return model;
  }
  if (cluster.topology_path.empty()) return FlatModel(members);
  Result<std::string> text = ReadTextFile(cluster.topology_path);
  if (!text.ok()) return Status::FailedPrecondition(text.status().message());
  Result<NetworkModel> model = ParseTopology(*text);
  if (!model.ok()) return model.status().WithContext(cluster.topology_path);
  return model;
}

BroadcastCoordinator::BroadcastCoordinator(Participant& participant, ControlTree& tree, const ClusterConfig& cluster,
                                           CoordinatorOptions options)
    : participant_(participant), tree_(tree), cluster_(cluster), options_(std::move(options)) {}

// The source first, then the receivers: the request's, or every other member of the cluster.
Result<std::vector<std::string>> BroadcastCoordinator::ChooseMembers(const v1::BroadcastRequest& request) const {
  std::vector<std::string> members = {participant_.name()};
  if (cluster_.Find(participant_.name()) == nullptr) {
    return Status::FailedPrecondition("this daemon '" + participant_.name() + "' is not in the cluster file");
  }
  if (request.members().empty()) {
    for (const ClusterMember& m : cluster_.members) {
      if (m.name != participant_.name()) members.push_back(m.name);
    }
  } else {
    for (const std::string& m : request.members()) {
      if (cluster_.Find(m) == nullptr) return Status::InvalidArgument("unknown member '" + m + "'");
      if (std::find(members.begin(), members.end(), m) == members.end()) members.push_back(m);
    }
  }
  return members;
}

Result<int> NodeOfMember(const NetworkModel& net, const std::string& name) {
  std::optional<int> node = net.FindNode(name);
  if (!node) return Status::FailedPrecondition("member '" + name + "' is not a node of the topology");
  return *node;
}

// The plan of the request's planner and mode over `members`, validated on the network model.
Result<BroadcastCoordinator::MadePlan> BroadcastCoordinator::MakeBroadcastPlan(const v1::BroadcastRequest& request,
                                                                             const std::vector<std::string>& members,
                                                                             uint64_t size) const {
  GRIDCAST_ASSIGN_OR_RETURN(NetworkModel net, LoadBroadcastModel(cluster_, request.topology_yaml(), members));
  PlanOptions plan_options;
  for (const std::string& m : members) {
    GRIDCAST_ASSIGN_OR_RETURN(const int node, NodeOfMember(net, m));
    plan_options.members.push_back(node);
  }
  plan_options.source = plan_options.members.front();
  BroadcastModeInputs mode_inputs;
  if (request.mode() != v1::PLAN_MODE_UNSPECIFIED) {
    GRIDCAST_ASSIGN_OR_RETURN(mode_inputs.requested, PlanModeFromProto(request.mode()));
  }
  if (!request.algorithm().empty()) mode_inputs.algorithm = request.algorithm();
  // A topology in the request (tomography's, from the client) counts as described.
  mode_inputs.network_described = !cluster_.topology_path.empty() || !request.topology_yaml().empty();
  mode_inputs.payload_bytes = size;
  mode_inputs.data_encrypted = options_.data_tls;
  mode_inputs.probe = request.probe_bytes() > 0;
  GRIDCAST_ASSIGN_OR_RETURN(const PlanMode mode, ChooseBroadcastMode(mode_inputs));
  if (request.streams() > 0) plan_options.streams = static_cast<int>(request.streams());
  // What the request leaves open, `auto` may choose.
  plan_options.choose_chunk_bytes = request.chunk_bytes() == 0;
  plan_options.choose_streams = request.streams() == 0;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                            MakePlanner(PlannerForMode(mode, mode_inputs.algorithm)));
  plan_options.min_chunk_bytes = SmallestChunkBytes(size, ModeHasSwarm(mode));
  if (request.chunk_bytes() > 0) {
    GRIDCAST_RETURN_IF_ERROR(CheckChunkCount(size, request.chunk_bytes(), ModeHasSwarm(mode)));
    plan_options.chunk_bytes = request.chunk_bytes();
  } else {
    plan_options.chunk_bytes = std::max(planner->DefaultChunkBytes(size), plan_options.min_chunk_bytes);
  }
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, MakeCheckedPlan(*planner, mode, net, size, plan_options));
  // Rates only where they describe the network (FlatModel's are a guess), and not for shared
  // lanes, whose source balances them by how fast each drains.
  if (mode_inputs.network_described && plan.HasLanes() && !plan.shared_chunks) {
    GRIDCAST_RETURN_IF_ERROR(SetPlannedLaneRates(plan, net));
  }
  return MadePlan{std::move(plan), PlanModel{std::move(net), std::move(plan_options.members)}};
}

Result<v1::PlanBroadcastResponse> BroadcastCoordinator::PlanOnly(const v1::PlanBroadcastRequest& asked) const {
  GRIDCAST_RETURN_IF_ERROR(CheckPlanBroadcastRequest(asked));
  const v1::BroadcastRequest& request = asked.broadcast();
  const uint64_t size_bytes = asked.size_bytes();
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<std::string> members, ChooseMembers(request));
  GRIDCAST_ASSIGN_OR_RETURN(const MadePlan made, MakeBroadcastPlan(request, members, size_bytes));
  const Plan& plan = made.plan;
  v1::Plan proto;
  PlanToProto(plan, &proto);
  v1::PlanBroadcastResponse response;
  response.set_algorithm(plan.algorithm);
  response.set_rationale(plan.rationale);
  response.set_mode(proto.mode());
  response.set_chunk_bytes(plan.chunk_bytes);
  response.set_lanes(static_cast<uint32_t>(plan.lanes.size()));
  return response;
}

Status BroadcastCoordinator::Run(const v1::BroadcastRequest& request,
                                 const std::function<void(const v1::BroadcastProgress&)>& report) {
  const auto received = std::chrono::steady_clock::now();
  GRIDCAST_RETURN_IF_ERROR(CheckBroadcastRequest(request));
  if (request.has_origin()) return RunFromOrigin(request, received, report);
  GRIDCAST_ASSIGN_OR_RETURN(const ResolvedPayload payload, ResolvePayload(request, participant_.directories()));
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<std::string> members, ChooseMembers(request));

  const std::string key =
      SameBroadcastKey(request, payload.directory.empty() ? payload.path : payload.directory, payload.name, members);
  return joined_.RunOrJoin(key, payload.name, report, [&](const JoinedBroadcasts::Report& publish) {
    return RunResolved(request, payload, members, received, publish);
  });
}

Status BroadcastCoordinator::RunFromOrigin(const v1::BroadcastRequest& request,
                                           std::chrono::steady_clock::time_point received,
                                           const std::function<void(const v1::BroadcastProgress&)>& report) {
  const std::string name = request.name().empty() ? UrlFileName(request.origin().url()) : request.name();
  if (name.empty()) {
    return Status::InvalidArgument("the origin's URL names no file (its path ends with '/'): name the payload");
  }
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<std::string> members, ChooseMembers(request));
  const fs::path data_dir = participant_.directories().data_dir;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<OriginFetch> fetch, OriginFetch::Start(request.origin(), data_dir, received));
  const double timeout_s = request.timeout_s() > 0 ? request.timeout_s() : kMaxRequestSeconds;
  const auto stall_after =
      request.stall_timeout_s() > 0 ? Milliseconds(request.stall_timeout_s()) : options_.stall_after;
  GRIDCAST_ASSIGN_OR_RETURN(const uint64_t size, fetch->WaitForSize(received + Milliseconds(timeout_s), stall_after));
  spdlog::info("origin {}: {} bytes, sent on as they arrive", fetch->shown_url(), size);
  // Every request fetches afresh: two requests of one URL are not joined (the origin may have
  // changed in between).
  const ResolvedPayload payload{fetch->path(), size, name, {}, nullptr};
  GRIDCAST_RETURN_IF_ERROR(RunResolved(request, payload, members, received, report, fetch.get()));
  if (Status kept = fetch->KeepAs(data_dir.string(), name); !kept.ok()) {
    spdlog::warn("broadcast of {}: every member holds it, but this source keeps no copy: {}", name, kept.ToString());
  }
  return Status::Ok();
}

Status BroadcastCoordinator::RunResolved(const v1::BroadcastRequest& request, const ResolvedPayload& payload,
                                         const std::vector<std::string>& members,
                                         std::chrono::steady_clock::time_point received,
                                         const std::function<void(const v1::BroadcastProgress&)>& report,
                                         OriginFetch* origin) {
  const fs::path& canonical = payload.path;
  const uint64_t size = payload.size;
  const std::string& name = payload.name;

  GRIDCAST_ASSIGN_OR_RETURN(MadePlan made, MakeBroadcastPlan(request, members, size));
  Plan& plan = made.plan;

  std::unique_ptr<PayloadStore> store;
  if (origin != nullptr) {
    GRIDCAST_ASSIGN_OR_RETURN(store, OpenOriginSource(request, canonical, size, plan));
  } else if (request.has_fill()) {
    const auto stall_after =
        request.stall_timeout_s() > 0 ? Milliseconds(request.stall_timeout_s()) : options_.stall_after;
    GRIDCAST_ASSIGN_OR_RETURN(store,
                              OpenFilledSource(request, canonical, plan, participant_.rank_memory(), stall_after));
  } else {
    GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(request.digest()));
    const WeakChecksums weak = request.no_reuse() ? WeakChecksums::kSkip : WeakChecksums::kCompute;
    // A payload is hashed as it is sent (docs/streamed-digests.md, section 4); an empty one
    // has nothing to stream.
    if (size == 0) {
      GRIDCAST_ASSIGN_OR_RETURN(
          store, PayloadStore::OpenSource(canonical.string(), plan.chunk_bytes, digest, SystemFileIo(), weak));
    } else {
      GRIDCAST_ASSIGN_OR_RETURN(store, PayloadStore::OpenStreamedSource(canonical.string(), plan.chunk_bytes, digest,
                                                                        SystemFileIo(), weak));
    }
  }
  OutgoingPlan outgoing = Outgoing(std::move(plan), name, store->identity());
  outgoing.proto.mutable_payload()->set_directory(!payload.directory.empty());
  outgoing.proto.mutable_payload()->set_base(request.base());
  GRIDCAST_ASSIGN_OR_RETURN(SigningKey key, SigningKey::Generate());
  StreamDigests(key.public_key(), outgoing.proto.mutable_payload());
  if (options_.signer != nullptr) {
    GRIDCAST_ASSIGN_OR_RETURN(std::string signature,
                              options_.signer->Sign(DigestKeyStatement(outgoing.id, key.public_key())));
    outgoing.proto.mutable_payload()->set_key_signature(std::move(signature));
    outgoing.proto.mutable_payload()->set_source_certificate(options_.signer->certificate());
  }
  outgoing.digest_key = std::move(key);
  ExecuteInputs inputs;
  inputs.members = members;
  inputs.timeout_s = request.timeout_s();
  inputs.stall_timeout_s = request.stall_timeout_s();
  inputs.in_memory = request.in_memory();
  inputs.take_memory_lazily = request.take_memory_lazily();
  inputs.into_registered_memory = request.in_memory() && request.into_registered_memory();
  inputs.source_store = std::move(store);
  inputs.received = received;
  inputs.origin = origin;
  if (outgoing.plan.HasLanes()) inputs.repair = std::move(made.model);
  // From the Prepare on, members may hold the first batch's digests.
  if (origin != nullptr) origin->Forwarding();
  spdlog::info("broadcast {}: {} ({} bytes) to {} members with {}", ToHex(outgoing.id), name, size,
               members.size() - 1, outgoing.plan.algorithm);
  return Execute(std::move(outgoing), std::move(inputs), report);
}

BroadcastCoordinator::OutgoingPlan BroadcastCoordinator::Outgoing(Plan plan, const std::string& name,
                                                                  const PayloadIdentity& identity) {
  OutgoingPlan outgoing{PlanId::Random(), std::move(plan), {}, std::nullopt};
  v1::Plan& proto = outgoing.proto;
  PlanToProto(outgoing.plan, &proto);
  proto.set_plan_id(AsString(outgoing.id.bytes()));
  v1::Payload* payload = proto.mutable_payload();
  payload->set_name(name);
  payload->set_digest(ChunkDigestToProto(identity.digest));
  if (identity.Streams()) {  // hashed as it is sent: nothing known yet but what to stream
    payload->set_weak_checksums_streamed(identity.streams_weak_checksums);
    return outgoing;
  }
  payload->set_chunk_hashes(EncodeChunkHashes(identity.digest, identity.chunk_hashes));
  payload->set_sha256(AsString(identity.sha256));
  payload->set_weak_checksums(EncodeWeakChecksums(identity.weak_checksums));
  return outgoing;
}

void BroadcastCoordinator::StreamDigests(const PublicKey& key, v1::Payload* payload) {
  payload->set_digest_key(AsString(key));
  if (payload->chunk_hashes().empty()) return;  // none to announce: no chunk, or hashed as it is sent
  // ChunkListDigest is the SHA-256 of the list as it is encoded.
  payload->set_chunk_list_sha256(AsString(Sha256(AsBytes(payload->chunk_hashes()))));
  payload->set_weak_checksums_streamed(!payload->weak_checksums().empty());
  payload->clear_chunk_hashes();
  payload->clear_weak_checksums();
}

void BroadcastCoordinator::SumTraffic(uint64_t source_sent_bytes, bool source_listed,
                                      v1::BroadcastProgress* progress) {
  uint64_t moved = source_listed ? 0 : source_sent_bytes;
  uint64_t reused = 0;
  for (const v1::MemberProgress& m : progress->members()) {
    moved += m.sent_bytes();
    reused += m.reused_bytes();
  }
  progress->set_moved_bytes(moved);
  progress->set_reused_bytes(reused);
}

Status BroadcastCoordinator::AddressMembers(v1::Plan* proto) const {
  for (v1::Member& m : *proto->mutable_members()) {
    const ClusterMember* entry = cluster_.Find(m.name());
    if (entry == nullptr) return Status::FailedPrecondition("member '" + m.name() + "' is not in the cluster file");
    m.set_control_address(entry->control_address);
    m.set_data_address(entry->data_address);
    m.set_bt_address(entry->bt_address);
  }
  return Status::Ok();
}

namespace {

// What every progress report of `proto` says before anything moved. The payload's digests are
// there once known (a source that hashes as it sends learns them at the end).
v1::BroadcastProgress FirstProgress(const v1::Plan& proto) {
  v1::BroadcastProgress progress;
  progress.set_plan_id(proto.plan_id());
  progress.set_algorithm(proto.algorithm());
  progress.set_rationale(proto.rationale());
  progress.set_payload_bytes(proto.payload().size_bytes());
  progress.set_chunk_bytes(proto.payload().chunk_bytes());
  progress.set_digest(proto.payload().digest());
  progress.set_lanes(static_cast<uint32_t>(proto.lanes_size()));
  progress.set_mode(proto.mode());
  return progress;
}

// The Prepare the source sends down the control tree (and, when it receives too, runs itself).
v1::PrepareRequest PrepareRequestOf(v1::Plan proto, const BroadcastCoordinator::ExecuteInputs& inputs, double timeout_s,
                                    const CoordinatorOptions& options) {
  v1::PrepareRequest request;
  request.set_member_index(0);
  request.set_timeout_s(timeout_s);
  request.set_in_memory(inputs.in_memory);
  request.set_take_memory_lazily(inputs.take_memory_lazily);
  request.set_into_registered_memory(inputs.into_registered_memory);
  request.set_control_fanout(std::max<uint32_t>(options.control_fanout, 1));
  *request.mutable_plan() = std::move(proto);
  return request;
}

// How Execute follows a broadcast it started: `own` is the source's run, `deadline` when the
// whole broadcast must be over.
FollowOptions FollowOptionsFor(const CoordinatorOptions& options, double stall_timeout_s,
                               std::chrono::steady_clock::time_point deadline, double timeout_s, const PlanRun& own,
                               bool has_swarm, bool source_receives) {
  FollowOptions follow;
  follow.poll_interval = options.poll_interval;
  follow.poll_timeout = options.poll_timeout;
  follow.member_lost_after = options.member_lost_after;
  follow.stall_after = stall_timeout_s > 0 ? Milliseconds(stall_timeout_s) : options.stall_after;
  follow.deadline = deadline;
  follow.timeout_s = timeout_s;
  follow.gives_up_on_unreachable = !source_receives;
  follow.observations = has_swarm;
  follow.source_receives = source_receives;
  follow.closing = [own] { return own.Closing(); };
  if (!source_receives) {
    follow.source_failure = [own] {
      const ExecutionSnapshot source = own.Snapshot();
      return source.state == ExecutionState::kFailed ? Status::Aborted("at the source: " + source.error) : Status::Ok();
    };
  }
  return follow;
}

}  // namespace

Result<PlanRun> BroadcastCoordinator::Agree(const v1::PrepareRequest& request, const PlanId& id, Plan plan,
                                            std::unique_ptr<PayloadStore> source_store,
                                            std::optional<SigningKey> digest_key,
                                            const std::string& agreement_digest, ControlTraffic* traffic) {
  // A source that receives prepares itself as a member does, while its control children prepare.
  std::future<Result<v1::PrepareResponse>> own_prepare;
  std::optional<PlanRun> own;
  if (source_store == nullptr) {
    own_prepare = std::async(std::launch::async, [&] { return participant_.Prepare(request); });
  } else {
    GRIDCAST_ASSIGN_OR_RETURN(own, participant_.PrepareSource(id, std::move(plan), request.plan(),
                                                              request.control_fanout(), std::move(source_store),
                                                              std::move(digest_key)));
  }
  // Deeper members get less of the time (each level keeps a quarter to step around a silent child).
  Result<uint32_t> agreed = tree_.PrepareFromSource(request, agreement_digest, traffic,
                                                    std::chrono::steady_clock::now() + 2 * options_.client.call_timeout);
  const auto others = static_cast<uint32_t>(request.plan().members_size() - 1);
  if (agreed.ok() && *agreed != others) {
    agreed = Status::Internal(std::to_string(*agreed) + " of " + std::to_string(others) + " members agreed");
  }
  if (own_prepare.valid()) {
    Result<v1::PrepareResponse> prepared = own_prepare.get();
    if (agreed.ok() && !prepared.ok()) agreed = prepared.status().WithContext("member '" + participant_.name() + "'");
    if (prepared.ok()) own = participant_.plans().FindRun(id);
  }
  GRIDCAST_RETURN_IF_ERROR(agreed.status());
  // A Cancel that arrived meanwhile stopped the plan here (and let the participant forget it).
  if (!own || own->Snapshot().state == ExecutionState::kStopped) {
    return Status::Aborted("the broadcast was cancelled while it was prepared");
  }
  return *own;
}

Status BroadcastCoordinator::Execute(OutgoingPlan outgoing, ExecuteInputs inputs,
                                     const std::function<void(const v1::BroadcastProgress&)>& report) {
  const PlanId id = outgoing.id;
  const std::vector<std::string>& members = inputs.members;
  const uint64_t size = outgoing.plan.payload_bytes;
  const uint64_t chunks = outgoing.plan.NumChunks();
  const bool has_swarm = outgoing.plan.HasSwarm();
  const double timeout_s = inputs.timeout_s > 0 ? inputs.timeout_s : 120.0 + static_cast<double>(size) / 1e6;
  const auto deadline = std::chrono::steady_clock::now() + Milliseconds(timeout_s);
  GRIDCAST_ASSIGN_OR_RETURN(const Digest agreement_digest, PlanAgreementDigest(outgoing.proto));
  // The source receives too when it holds no whole payload (an allgather).
  const bool source_receives = inputs.source_store == nullptr;
  GRIDCAST_RETURN_IF_ERROR(AddressMembers(&outgoing.proto));
  v1::BroadcastProgress progress = FirstProgress(outgoing.proto);

  const v1::PrepareRequest prepare_request = PrepareRequestOf(std::move(outgoing.proto), inputs, timeout_s, options_);

  ControlTraffic traffic;
  std::optional<PlanRun> own;  // its first send time is read after release_all() let the node forget it
  std::optional<std::chrono::steady_clock::time_point> started;
  auto since_request = [&inputs](std::optional<std::chrono::steady_clock::time_point> at) {
    return at ? std::chrono::duration<double>(*at - inputs.received).count() : -1.0;
  };
  // Every report carries the control plane's cost so far.
  bool first_byte_logged = false;
  auto report_with_counters = [&](v1::BroadcastProgress& p) {
    v1::ControlCounters* counters = p.mutable_control();
    counters->set_rpcs_at_source(traffic.rpcs);
    counters->set_bytes_at_source(traffic.bytes);
    counters->set_first_byte_s(since_request(own ? own->Snapshot().first_payload_sent : std::nullopt));
    if (!first_byte_logged && counters->first_byte_s() >= 0) {
      first_byte_logged = true;
      spdlog::info("broadcast {}: first payload byte left {:.3f} s after the request", ToHex(id),
                   counters->first_byte_s());
    }
    counters->set_started_s(since_request(started));
    if (inputs.origin != nullptr) inputs.origin->Report(p.mutable_origin());
    report(p);
  };
  auto control_deadline = [](std::chrono::milliseconds budget) {
    return std::chrono::steady_clock::now() + budget;
  };
  auto release_all = [&](const std::string& reason, std::chrono::milliseconds budget) {
    (void)tree_.Cancel(id, reason, control_deadline(budget));
  };
  // Repairs patch the plan as the source made it (plan_repairer.h).
  std::optional<Plan> plan_to_repair;
  if (inputs.repair) plan_to_repair = outgoing.plan;
  Result<PlanRun> agreed = Agree(prepare_request, id, std::move(outgoing.plan), std::move(inputs.source_store),
                                 std::move(outgoing.digest_key), AsString(agreement_digest), &traffic);
  if (!agreed.ok()) {
    release_all("aborted: " + agreed.status().message(), options_.client.call_timeout);
    return agreed.status();
  }
  own = std::move(*agreed);

  // --- Start (the source first, then down the tree while the data flows), then follow.
  started = std::chrono::steady_clock::now();
  if (Status s = tree_.Start(id, *started, control_deadline(2 * options_.client.call_timeout)); !s.ok()) {
    release_all("aborted", options_.client.call_timeout);
    return s;
  }

  FollowOptions follow =
      FollowOptionsFor(options_, inputs.stall_timeout_s, deadline, timeout_s, *own, has_swarm, source_receives);
  if (inputs.origin != nullptr) {
    // A failed fetch fails the broadcast at once, rather than at the stall timeout.
    follow.source_failure = [at_source = std::move(follow.source_failure), origin = inputs.origin] {
      if (Status fetch = origin->Failure(); !fetch.ok()) return fetch;
      return at_source ? at_source() : Status::Ok();
    };
  }
  // A patch may take what a progress round may: the follower waits for it, and a member that
  // misses it (silent: a call timeout's budget kept the send 45 s on a paused daemon) is sent
  // every patch again on the first round it answers.
  std::optional<PlanRepairer> repairer;
  if (plan_to_repair) {
    const auto& entries = prepare_request.plan().members();
    repairer.emplace(tree_, id, std::move(*plan_to_repair), std::vector<v1::Member>(entries.begin(), entries.end()),
                     std::move(inputs.repair->net), std::move(inputs.repair->member_nodes), *started,
                     2 * options_.poll_timeout);
    follow.on_round = [&repairer](const std::vector<v1::MemberProgress>& attention, const std::set<std::string>& lost,
                                  v1::BroadcastProgress& p) {
      repairer->OnRound(attention, lost, p.slowest_member(), std::chrono::steady_clock::now());
      p.mutable_repairs()->Assign(repairer->repairs().begin(), repairer->repairs().end());
    };
  }
  BroadcastFollower follower(tree_, id, members, chunks, std::move(follow));
  const FollowOutcome outcome = follower.Follow(progress, *started, report_with_counters);
  const std::optional<SwarmReport> swarm = own->Swarm();
  if (swarm) progress.set_source_uploaded_bytes(swarm->uploaded_bytes);
  SumTraffic(TrafficOf(own->Snapshot(), swarm).sent_bytes, source_receives, &progress);
  // A member not done may not answer at all (a paused daemon, a host gone without a reset):
  // then the release may take what a progress round may, not a call timeout (22.5 s of a 30 s
  // one, spent after the others held their copies).
  release_all(outcome.settled ? "finished" : "aborted: " + outcome.status.message(),
              outcome.status.ok() ? options_.client.call_timeout : 2 * options_.poll_timeout);
  progress.set_finished(true);
  if (!outcome.status.ok()) progress.set_error(outcome.status.message());
  // Every member may hold the last chunk before the fetch's thread returned: its counters too.
  if (inputs.origin != nullptr && outcome.status.ok()) (void)inputs.origin->Wait();
  report_with_counters(progress);
  if (outcome.settled) {
    spdlog::info("broadcast {} finished in {:.3f} s{}", ToHex(id), progress.elapsed_s(),
                 outcome.status.ok() ? "" : " (" + outcome.status.message() + ")");
  }
  return outcome.status;
}

}  // namespace gridcast
