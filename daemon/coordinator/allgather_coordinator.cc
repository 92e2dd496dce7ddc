#include "daemon/coordinator/allgather_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "collectives/broadcast_mode.h"
#include "collectives/planners/all_to_all_auto.h"
#include "collectives/registry.h"
#include "common/hex.h"
#include "common/units.h"
#include "daemon/participant/request_checks.h"
#include "daemon/store/allgather_bundle.h"
#include "proto/plan_codec.h"

namespace gridcast {
namespace {

// The smallest chunk ChooseChunkBytes halves down to, as Planner::DefaultChunkBytes's.
constexpr uint64_t kSmallestChunk = 64 << 10;

// The all-to-all planner the request names ("auto" and "" mean auto-alltoall).
Result<std::unique_ptr<Planner>> AllToAllPlanner(const std::string& requested) {
  const std::string name = requested.empty() || requested == "auto" ? "auto-alltoall" : requested;
  const PlannerInfo* named = FindPlanner(name);
  if (named != nullptr && named->kind == PlannerKind::kAllToAll) return MakePlanner(name);
  std::string known;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind == PlannerKind::kAllToAll) known += (known.empty() ? "" : ", ") + info.name;
  }
  return Status::InvalidArgument("'" + name + "' is not an all-to-all planner; use auto or one of " + known);
}

}  // namespace

AllgatherCoordinator::AllgatherCoordinator(Participant& participant, BroadcastCoordinator& broadcasts,
                                           const ClusterConfig& cluster, ControlClientOptions client)
    : participant_(participant), broadcasts_(broadcasts), cluster_(cluster), client_(std::move(client)) {}

uint64_t AllgatherCoordinator::ChooseChunkBytes(const Planner& planner, const std::vector<uint64_t>& part_sizes) {
  uint64_t total = 0, smallest = UINT64_MAX;
  for (uint64_t size : part_sizes) {
    total += size;
    if (size > 0) smallest = std::min(smallest, size);
  }
  uint64_t chunk = planner.DefaultChunkBytes(total);
  while (chunk > kSmallestChunk && smallest != UINT64_MAX && chunk * 8 > smallest) chunk /= 2;
  return chunk;
}

Result<std::vector<v1::DescribePartResponse>> AllgatherCoordinator::Describe(
    const v1::AllgatherRequest& request, uint64_t chunk_bytes, const std::vector<std::string>& nonces,
    const std::vector<std::unique_ptr<ControlClient>>& clients) {
  std::vector<int> indices(request.parts_size());
  for (int i = 0; i < request.parts_size(); ++i) indices[i] = i;
  std::vector<Result<v1::DescribePartResponse>> answers =
      calls_.ForEach<Result<v1::DescribePartResponse>>(indices, [&](int i) -> Result<v1::DescribePartResponse> {
        const v1::AllgatherPart& part = request.parts(i);
        v1::DescribePartRequest describe;
        describe.set_path(part.path());
        describe.set_chunk_bytes(chunk_bytes);
        describe.set_in_memory(part.in_memory());
        describe.set_digest(request.digest());
        if (chunk_bytes > 0) describe.set_key_nonce(nonces[i]);
        Result<v1::DescribePartResponse> answer = [&]() -> Result<v1::DescribePartResponse> {
          if (clients[i] == nullptr) return participant_.holdings().DescribePart(describe);
          v1::DescribePartResponse response;
          GRIDCAST_RETURN_IF_ERROR(clients[i]->DescribePart(describe, client_.call_timeout, &response));
          return response;
        }();
        if (!answer.ok()) return answer.status().WithContext("the part at '" + part.member() + "'");
        if (chunk_bytes > 0 && !PublicKeyFromBytes(answer->digest_key()).ok()) {
          return Status::Internal("the part at '" + part.member() + "' came without a digest key");
        }
        return answer;
      });
  std::vector<v1::DescribePartResponse> described;
  for (Result<v1::DescribePartResponse>& answer : answers) {
    if (!answer.ok()) return answer.status();
    described.push_back(std::move(*answer));
  }
  return described;
}

Result<std::vector<std::string>> AllgatherCoordinator::MembersOf(const v1::AllgatherRequest& request) const {
  std::vector<std::string> members;
  std::set<std::string> part_names;
  bool holds_part = false;
  for (const v1::AllgatherPart& part : request.parts()) {
    if (cluster_.Find(part.member()) == nullptr) return Status::InvalidArgument("unknown member '" + part.member() + "'");
    if (std::find(members.begin(), members.end(), part.member()) != members.end()) {
      return Status::InvalidArgument("member '" + part.member() + "' has two parts");
    }
    const std::string& part_name = part.name().empty() ? part.member() : part.name();
    if (!part_names.insert(part_name).second) return Status::InvalidArgument("two parts are named '" + part_name + "'");
    members.push_back(part.member());
    holds_part = holds_part || part.member() == participant_.name();
  }
  if (!holds_part) {
    return Status::FailedPrecondition("this daemon '" + participant_.name() +
                                      "' holds no part: ask a member that contributes one");
  }
  std::rotate(members.begin(), std::find(members.begin(), members.end(), participant_.name()), members.end());
  return members;
}

std::vector<std::unique_ptr<ControlClient>> AllgatherCoordinator::HolderClients(const v1::AllgatherRequest& request,
                                                                                 ControlTraffic* traffic) const {
  ControlClientOptions describing = client_;
  describing.traffic = traffic;
  std::vector<std::unique_ptr<ControlClient>> clients;
  for (const v1::AllgatherPart& part : request.parts()) {
    clients.push_back(part.member() == participant_.name()
                          ? nullptr
                          : std::make_unique<ControlClient>(cluster_.Find(part.member())->control_address,
                                                            cluster_.secret, describing));
  }
  return clients;
}

namespace {

// Adds the parts of `request` to the bundle `payload` of `plan` (back to back in request
// order, each padded to whole chunks) and returns where each lies, as the progress reports it.
std::vector<v1::GatheredPart> PlaceParts(const v1::AllgatherRequest& request, const Plan& plan,
                                         const std::vector<uint64_t>& part_sizes, uint64_t chunk_bytes,
                                         v1::Payload* payload) {
  std::map<std::string, uint32_t> index_of;
  for (uint32_t m = 0; m < plan.members.size(); ++m) index_of[plan.members[m]] = m;
  std::vector<v1::GatheredPart> layout;
  uint64_t next_chunk = 0;
  for (int i = 0; i < request.parts_size(); ++i) {
    const v1::AllgatherPart& asked = request.parts(i);
    v1::GatheredPart& placed = layout.emplace_back();
    placed.set_member(asked.member());
    placed.set_name(asked.name().empty() ? asked.member() : asked.name());
    placed.set_size_bytes(part_sizes[i]);
    placed.set_offset(next_chunk * chunk_bytes);
    v1::Part* part = payload->add_parts();
    part->set_member(index_of.at(asked.member()));
    part->set_name(placed.name());
    part->set_size_bytes(part_sizes[i]);
    part->set_first_chunk(next_chunk);
    part->set_chunks(CeilDiv(part_sizes[i], chunk_bytes));
    part->set_path(asked.path());
    part->set_in_memory(asked.in_memory());
    next_chunk += part->chunks();
  }
  return layout;
}

}  // namespace

Status AllgatherCoordinator::Run(const v1::AllgatherRequest& request,
                                 const std::function<void(const v1::BroadcastProgress&)>& report) {
  const auto received = std::chrono::steady_clock::now();
  GRIDCAST_RETURN_IF_ERROR(CheckAllgatherRequest(request));
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, AllToAllPlanner(request.algorithm()));
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<std::string> members, MembersOf(request));

  // Sizes, then the chunk size, then the hashes at it; each other holder over one client.
  ControlTraffic describe_traffic;
  const std::vector<std::unique_ptr<ControlClient>> clients = HolderClients(request, &describe_traffic);
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<v1::DescribePartResponse> sizes, Describe(request, 0, {}, clients));
  std::vector<uint64_t> part_sizes;
  for (const v1::DescribePartResponse& d : sizes) part_sizes.push_back(d.size_bytes());
  const uint64_t chunk_bytes =
      request.chunk_bytes() > 0 ? request.chunk_bytes() : ChooseChunkBytes(*planner, part_sizes);
  // Each holder signs its part's digests as it reads it at Prepare, with a key it derives from
  // the nonce: nothing is read here, and no list grows with a part's size.
  std::vector<std::string> nonces(request.parts_size(), std::string(Holdings::kPartKeyNonceBytes, '\0'));
  for (std::string& nonce : nonces) RandomBytes({reinterpret_cast<uint8_t*>(nonce.data()), nonce.size()});
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<v1::DescribePartResponse> keyed,
                            Describe(request, chunk_bytes, nonces, clients));

  // The bundle: parts back to back in request order, each padded to whole chunks.
  GRIDCAST_ASSIGN_OR_RETURN(NetworkModel net, LoadBroadcastModel(cluster_, request.topology_yaml(), members));
  PlanOptions options;
  options.chunk_bytes = chunk_bytes;
  if (request.streams() > 0) options.streams = static_cast<int>(request.streams());
  options.parts.assign(net.nodes.size(), ChunkRange{0, 0, 1});
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(request.digest()));
  uint64_t next_chunk = 0;
  for (int i = 0; i < request.parts_size(); ++i) {
    if (keyed[i].size_bytes() != part_sizes[i]) {
      return Status::Aborted("the part at '" + request.parts(i).member() + "' changed while it was described");
    }
    const uint64_t chunks = CeilDiv(part_sizes[i], chunk_bytes);
    GRIDCAST_ASSIGN_OR_RETURN(const int node, NodeOfMember(net, request.parts(i).member()));
    options.parts[node] = ChunkRange{next_chunk, next_chunk + chunks, 1};
    options.members.push_back(node);
    next_chunk += chunks;
  }
  GRIDCAST_ASSIGN_OR_RETURN(options.source, NodeOfMember(net, participant_.name()));
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan,
                            MakeCheckedPlan(*planner, PlanMode::kPush, net, next_chunk * chunk_bytes, options));

  PayloadIdentity bundle;
  bundle.size_bytes = next_chunk * chunk_bytes;
  bundle.chunk_bytes = chunk_bytes;
  bundle.digest = digest;  // no list: each holder streams its part's (PartDigestsOf)
  BroadcastCoordinator::OutgoingPlan outgoing = BroadcastCoordinator::Outgoing(
      std::move(plan), request.in_memory() ? request.name() : request.name() + kAllgatherBundleSuffix, bundle);
  const std::vector<v1::GatheredPart> layout =
      PlaceParts(request, outgoing.plan, part_sizes, chunk_bytes, outgoing.proto.mutable_payload());
  for (int i = 0; i < request.parts_size(); ++i) {
    v1::Part* part = outgoing.proto.mutable_payload()->mutable_parts(i);
    part->set_digest_key(keyed[i].digest_key());
    part->set_key_nonce(nonces[i]);
    part->set_key_signature(keyed[i].key_signature());
    part->set_holder_certificate(keyed[i].certificate());
  }
  spdlog::info("allgather {}: {} parts, {} bytes padded, chunks of {} with {}", ToHex(outgoing.id),
               request.parts_size(), outgoing.plan.payload_bytes, chunk_bytes, outgoing.plan.algorithm);

  BroadcastCoordinator::ExecuteInputs inputs;
  inputs.members = outgoing.plan.members;
  inputs.timeout_s = request.timeout_s();
  inputs.stall_timeout_s = request.stall_timeout_s();
  inputs.in_memory = request.in_memory();
  inputs.take_memory_lazily = request.in_memory();
  inputs.received = received;
  const uint64_t describe_rpcs = describe_traffic.rpcs, describe_bytes = describe_traffic.bytes;
  // The description rounds are the allgather's control cost at this member too.
  return broadcasts_.Execute(std::move(outgoing), std::move(inputs), [&](const v1::BroadcastProgress& progress) {
    v1::BroadcastProgress counted = progress;
    for (const v1::GatheredPart& placed : layout) *counted.add_parts() = placed;
    v1::ControlCounters* control = counted.mutable_control();
    control->set_rpcs_at_source(control->rpcs_at_source() + describe_rpcs);
    control->set_bytes_at_source(control->bytes_at_source() + describe_bytes);
    report(counted);
  });
}

}  // namespace gridcast
