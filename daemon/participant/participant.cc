#include "daemon/participant/participant.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <filesystem>
#include <future>
#include <thread>

#include "cluster/cluster_file.h"
#include "collectives/validate_plan.h"
#include "common/control_tree_shape.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "daemon/participant/plan_payload.h"
#include "daemon/store/directory_archive.h"
#include "proto/plan_codec.h"
#include "proto/plan_slice.h"

namespace gridcast {

Participant::Participant(boost::asio::io_context& io, ParticipantOptions options)
    : io_(io),
      options_(std::move(options)),
      workers_(options_.workers > 0 ? options_.workers : std::max(2u, std::thread::hardware_concurrency())),
      holdings_(options_.directories, plans_, workers_, options_.warm_memory.get(), options_.signer) {}

Status Participant::CheckKeySignatures(const PlanId& id, const v1::Plan& proto) const {
  if (options_.verifier == nullptr) return Status::Ok();
  // Whoever signed must be the member the plan names, at the host this daemon's own cluster
  // file gives it (the plan's addresses came through the relays).
  auto check = [&](uint32_t member, const std::string& key_bytes, const std::string& statement_nonce, bool part,
                   const std::string& signature, const std::string& certificate) -> Status {
    const v1::Member* named = FindMember(proto, member);
    if (named == nullptr) return Status::InvalidArgument("the plan does not name the member that made its key");
    GRIDCAST_ASSIGN_OR_RETURN(const PublicKey key, PublicKeyFromBytes(key_bytes));
    GRIDCAST_ASSIGN_OR_RETURN(const std::string host, options_.data_host_of(named->name()));
    const std::string statement = part ? PartKeyStatement(statement_nonce, key) : DigestKeyStatement(id, key);
    return options_.verifier->Verify(certificate, host, statement, signature,
                                     (part ? "the part holder '" : "the source '") + named->name() + "'");
  };
  const v1::Payload& payload = proto.payload();
  if (!payload.digest_key().empty()) {
    GRIDCAST_RETURN_IF_ERROR(
        check(0, payload.digest_key(), {}, false, payload.key_signature(), payload.source_certificate()));
  }
  for (const v1::Part& part : payload.parts()) {
    GRIDCAST_RETURN_IF_ERROR(check(part.member(), part.digest_key(), part.key_nonce(), true, part.key_signature(),
                                   part.holder_certificate()));
  }
  return Status::Ok();
}

Result<std::shared_ptr<PlanExecution>> Participant::Register(const PlanId& id, const v1::Plan& proto, Plan plan,
                                                             int self, uint32_t control_fanout,
                                                             std::unique_ptr<PayloadStore> store,
                                                             bool in_memory, std::function<Status()> after_finalize,
                                                             std::optional<SigningKey> digest_key) {
  // By whole-plan index; members a slice does not list (this member never deals with them)
  // have none.
  std::vector<std::string> addresses(plan.members.size());
  std::vector<std::string> bt_addresses(plan.members.size());
  for (int entry = 0; entry < proto.members_size(); ++entry) {
    const v1::Member& m = proto.members(entry);
    Result<std::pair<std::string, uint16_t>> address = SplitHostPort(m.data_address());
    if (!address.ok()) return address.status().WithContext("member '" + m.name() + "'");
    addresses[WholeIndexOf(proto, entry)] = m.data_address();
    bt_addresses[WholeIndexOf(proto, entry)] = m.bt_address();
  }
  std::unique_ptr<DigestStream> digests;
  if (!digest_key) GRIDCAST_RETURN_IF_ERROR(CheckKeySignatures(id, proto));
  GRIDCAST_ASSIGN_OR_RETURN(std::optional<PartDigests> part_digests, PartDigestsOf(proto.payload()));
  if (part_digests) {
    if (store->digest_log() == nullptr) return Status::Internal("an allgather's store has no digest log");
    GRIDCAST_ASSIGN_OR_RETURN(digests, DigestStream::ForParts(id, store->identity(), std::move(part_digests->rule),
                                                              std::move(part_digests->keys), store->digest_log()));
  } else if (!proto.payload().digest_key().empty()) {
    const Result<PublicKey> key = PublicKeyFromBytes(proto.payload().digest_key());
    if (!key.ok()) return key.status().WithContext("the plan's digest_key");
    // Unnamed files: the list also comes with the plan, so a restarted member needs none of it.
    GRIDCAST_ASSIGN_OR_RETURN(
        std::shared_ptr<DigestLog> log,
        DigestLog::OpenUnnamed(options_.directories.data_dir, store->identity().digest,
                               DigestBatches(store->identity().chunk_bytes, store->identity().NumChunks()),
                               SystemFileIo()));
    store->ExpectDigestsFrom(log);
    if (digest_key) {
      if (digest_key->public_key() != *key) {
        return Status::Internal("the plan names another digest key than the source signs with");
      }
      GRIDCAST_ASSIGN_OR_RETURN(digests, DigestStream::ForSource(id, store->identity(), std::move(*digest_key),
                                                                 std::move(log)));
    } else {
      GRIDCAST_ASSIGN_OR_RETURN(digests, DigestStream::ForMember(id, store->identity(), *key, std::move(log)));
    }
  }
  auto execution = std::make_shared<PlanExecution>(io_, workers_, std::move(plan), id, self, std::move(addresses),
                                                   std::move(store), options_.execution, std::move(digests));
  if (after_finalize) execution->SetAfterFinalize(std::move(after_finalize));
  if (execution->plan().HasSwarm() && !proto.payload().digest_key().empty()) {
    const int fanout = control_fanout > 0 ? static_cast<int>(control_fanout) : kDefaultControlFanout;
    execution->SetDigestTree(
        DigestTree{execution->plan().swarm.source, static_cast<int>(execution->plan().members.size()), fanout});
  }
  if (execution->plan().HasSwarm()) {
    if (options_.torrents == nullptr) return Status::FailedPrecondition("this daemon runs no BitTorrent session");
    std::weak_ptr<PlanExecution> weak = execution;
    SwarmJoin join{id, execution->shared_store(), execution->plan(), self,
                   std::move(bt_addresses), [weak](bool newly) {
                     if (auto e = weak.lock()) e->OnSwarmChunkVerified(newly);
                   },
                   {}, [weak] {
                     if (auto e = weak.lock()) e->NotePayloadSent();
                   }};
    join.looks_first = execution->FindsHeldChunksLater();
    // A hybrid member's push lanes already say when a chunk may leave the page cache.
    if (!execution->plan().HasLanes()) {
      join.on_chunk_shared = [weak](uint64_t chunk) {
        if (auto e = weak.lock()) e->OnSwarmChunkShared(chunk);
      };
    }
    GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<PullSwarm> swarm, options_.torrents->Join(std::move(join)));
    execution->AttachSwarm(std::move(swarm));
  }
  return plans_.Add(std::move(execution), HeldName{proto.payload().name(), in_memory});
}

Result<v1::PrepareResponse> Participant::Prepare(const v1::PrepareRequest& request) {
  const v1::Plan& plan = request.plan();
  GRIDCAST_ASSIGN_OR_RETURN(PlanId id, PlanId::FromBytes(plan.plan_id()));
  const v1::Member* self = FindMember(plan, request.member_index());
  if (self == nullptr || self->name() != options_.name) {
    return Status::InvalidArgument("this daemon is '" + options_.name +
                                   "', not the member the plan names at index " +
                                   std::to_string(request.member_index()));
  }
  std::shared_ptr<PlanExecution> execution = plans_.Find(id);
  if (execution == nullptr) {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(plan.payload().name()));
    if (!plan.payload().base().empty()) GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(plan.payload().base()).WithContext("the base"));
    GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity identity, IdentityFromProto(plan.payload()));
    // Validate this member's part of the plan (all it is given, through the control tree)
    // before touching the disk.
    GRIDCAST_ASSIGN_OR_RETURN(Plan parsed, PlanPartFromProto(plan, static_cast<int>(request.member_index())));
    if (plan.payload().directory()) {
      if (request.in_memory()) return Status::InvalidArgument("a directory payload cannot be received into memory");
      GRIDCAST_RETURN_IF_ERROR(DirectoryOfArchive(plan.payload().name()).status());
    }
    const std::vector<BundlePart> parts = BundlePartsFromProto(plan.payload());
    if (!parts.empty()) {
      if (plan.payload().directory() || parsed.HasSwarm()) {
        return Status::InvalidArgument("an allgather is pushed, and its parts are files");
      }
      GRIDCAST_RETURN_IF_ERROR(
          CheckBundleParts(parts, WholeMemberCount(plan), identity.chunk_bytes, identity.size_bytes));
      if (!request.in_memory()) GRIDCAST_RETURN_IF_ERROR(DirectoryOfBundle(plan.payload().name()).status());
    }
    GRIDCAST_ASSIGN_OR_RETURN(
        const RunningPlans::Claim claim,
        plans_.ClaimName(id, HeldName{plan.payload().name(), request.in_memory()}, parsed.members[0]));
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<PayloadStore> store, OpenMemberStore(request, std::move(identity), parts));
    KnownChunks* const known = store->capabilities().known;
    // Chunks an earlier attempt verified: held again now, or as their digests come.
    const uint64_t to_check = known != nullptr ? known->Candidates() : 0;
    GRIDCAST_ASSIGN_OR_RETURN(execution, Register(id, plan, std::move(parsed), static_cast<int>(request.member_index()),
                                                  request.control_fanout(), std::move(store), request.in_memory(),
                                                  AfterFinalize(request, id, parts)));
    if (options_.execution.counters) {
      if (to_check > 0) options_.execution.counters->ResumeBegun();
      if (const uint64_t resumed = execution->store().ResumedChunks(); resumed > 0) {
        options_.execution.counters->ChunksResumed(resumed);
      }
      if (const uint64_t reused = execution->store().ReusedBytes(); reused > 0) options_.execution.counters->Reused(reused);
    }
    spdlog::info("prepared plan {} ({}, {} bytes, {} of {} chunks held, {} verified before to check; told of {} of {} "
                 "members)",
                 ToHex(id), plan.payload().name(), plan.payload().size_bytes(), execution->store().VerifiedCount(),
                 execution->store().identity().NumChunks(), to_check, plan.members_size(), WholeMemberCount(plan));
  }
  v1::PrepareResponse response;
  response.set_member(options_.name);
  response.set_plan_id(plan.plan_id());
  response.set_payload_bytes(plan.payload().size_bytes());
  // What this member parsed and will verify against.
  GRIDCAST_ASSIGN_OR_RETURN(const Digest agreement, PlanAgreementDigest(plan));
  response.set_chunk_hashes_sha256(AsString(agreement));
  response.set_members_sha256(AsString(MembersDigest(plan)));
  response.set_chunks_held(execution->store().VerifiedCount());
  return response;
}

namespace {

namespace fs = std::filesystem;

// A directory payload's earlier copy is the tree the member unpacked before (the archive was
// dropped), read in place as the archive that packs it (PackDirectory gives the same tree the
// same bytes). Null when there is no tree to search (or it cannot be read as one: then every
// chunk is received).
std::unique_ptr<ByteSource> EarlierTree(const std::string& data_dir, const v1::Payload& payload) {
  if (!payload.directory() || (payload.weak_checksums().empty() && !payload.weak_checksums_streamed())) return nullptr;
  Result<std::string> dir = payload.base().empty() ? DirectoryOfArchive(payload.name()) : payload.base();
  std::error_code ec;
  const fs::path tree = fs::path(data_dir) / (dir.ok() ? *dir : "");
  // Below data_dir by name (checked), and no link on the way to it or at it.
  if (!dir.ok() || !fs::is_directory(fs::symlink_status(tree, ec)) ||
      !IsWithin(fs::canonical(tree, ec), fs::canonical(data_dir, ec))) {
    return nullptr;
  }
  Result<std::unique_ptr<ByteSource>> archive = ReadDirectoryAsArchive(tree);
  if (!archive.ok()) {
    spdlog::warn("{}: the earlier tree cannot be searched, receiving every chunk: {}", payload.name(),
                 archive.status().ToString());
    return nullptr;
  }
  return std::move(*archive);
}

}  // namespace

Result<std::unique_ptr<PayloadStore>> Participant::OpenMemberStore(const v1::PrepareRequest& request,
                                                                   PayloadIdentity identity,
                                                                   const std::vector<BundlePart>& parts) const {
  const v1::Plan& plan = request.plan();
  std::shared_ptr<RankMemory> lent = LentMemoryFor(request, parts.empty());
  const std::string& dir = options_.directories.Of(request.in_memory());
  std::shared_ptr<const ByteSource> tree = EarlierTree(dir, plan.payload());
  ReceiveOptions receive;
  receive.space = request.in_memory() && request.take_memory_lazily() ? ReceiveSpace::kCheckFree : ReceiveSpace::kReserve;
  receive.earlier = {plan.payload().base(), std::move(tree)};
  // In memory and no swarm (one writer per chunk): chunks are received into their final pages.
  receive.in_place = request.in_memory() && !PlanHasSwarm(plan);
  receive.take_memory_now = request.in_memory() && !request.take_memory_lazily();
  if (!request.in_memory()) receive.page_cache_window_bytes = options_.execution.page_cache_window_bytes;
  if (request.in_memory()) receive.warm = options_.warm_memory.get();
  GRIDCAST_ASSIGN_OR_RETURN(
      std::unique_ptr<PayloadStore> store,
      lent != nullptr ? PayloadStore::OpenForRankMemory(plan.payload().name(), std::move(identity), lent)
                      : PayloadStore::OpenForReceive(dir, plan.payload().name(), std::move(identity), SystemFileIo(),
                                                     receive));
  GRIDCAST_ASSIGN_OR_RETURN(const std::optional<PartDigests> part_digests, PartDigestsOf(plan.payload()));
  if (part_digests) {
    // The log the members check each part's chunks against, and this member's part in it.
    GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<DigestLog> log,
                              DigestLog::OpenUnnamed(options_.directories.data_dir, store->identity().digest,
                                                     part_digests->rule, SystemFileIo()));
    store->ExpectDigestsFrom(std::move(log));
    GRIDCAST_ASSIGN_OR_RETURN(const PlanId id, PlanId::FromBytes(plan.plan_id()));
    for (int i = 0; i < plan.payload().parts_size(); ++i) {
      if (parts[i].member != request.member_index()) continue;
      GRIDCAST_RETURN_IF_ERROR(SeedOwnPart(*store, plan.payload(), plan.payload().parts(i), parts[i],
                                           part_digests->rule, id));
    }
  }
  return store;
}

std::function<Status()> Participant::AfterFinalize(const v1::PrepareRequest& request, const PlanId& id,
                                                   const std::vector<BundlePart>& parts) const {
  const v1::Plan& plan = request.plan();
  if (plan.payload().directory()) {
    return [data_dir = options_.directories.data_dir, name = plan.payload().name(), tag = ToHex(id),
            sync = options_.execution.sync_on_finish] { return UnpackDirectoryPayload(data_dir, name, tag, sync); };
  }
  if (!parts.empty() && !request.in_memory()) {
    return [data_dir = options_.directories.data_dir, name = plan.payload().name(), parts, tag = ToHex(id),
            chunk_bytes = plan.payload().chunk_bytes(), sync = options_.execution.sync_on_finish] {
      return SplitBundle(data_dir, name, parts, chunk_bytes, tag, sync);
    };
  }
  return {};
}

std::shared_ptr<RankMemory> Participant::LentMemoryFor(const v1::PrepareRequest& request, bool whole_payload) const {
  const v1::Plan& plan = request.plan();
  if (!request.into_registered_memory() || !request.in_memory() || PlanHasSwarm(plan) ||
      plan.payload().directory() || !whole_payload || options_.rank_memory == nullptr) {
    return nullptr;
  }
  std::vector<std::shared_ptr<ProcessRegion>> regions =
      options_.rank_memory->Bind(plan.payload().name(), plan.payload().size_bytes());
  if (regions.empty()) return nullptr;
  spdlog::info("{} goes into the memory {} local process(es) lent", plan.payload().name(), regions.size());
  return std::make_shared<RankMemory>(std::move(regions), RankMemory::kKeptBytes);
}

Status Participant::SeedOwnPart(PayloadStore& store, const v1::Payload& payload, const v1::Part& sent,
                                const BundlePart& part, const DigestBatches& rule, const PlanId& id) const {
  v1::DescribePartRequest described;
  described.set_path(part.path);
  described.set_chunk_bytes(payload.chunk_bytes());
  described.set_in_memory(part.in_memory);
  described.set_digest(payload.digest());
  described.set_key_nonce(sent.key_nonce());
  GRIDCAST_ASSIGN_OR_RETURN(const SigningKey key, holdings_.PartKey(described, part.size_bytes));
  if (AsString(key.public_key()) != sent.digest_key()) {
    return Status::FailedPrecondition("part '" + part.name + "' names a digest key this daemon did not make for it (" +
                                      "was it restarted since the allgather described its part?)");
  }
  GRIDCAST_ASSIGN_OR_RETURN(const std::filesystem::path path,
                            options_.directories.ResolveSend(part.path, part.in_memory));
  GRIDCAST_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  const Status seeded = SeedPart(store, fd, part, rule, key, id);
  close(fd);
  return seeded;
}

Result<PlanRun> Participant::PrepareSource(const PlanId& id, Plan plan, const v1::Plan& sent, uint32_t control_fanout,
                                           std::unique_ptr<PayloadStore> store, std::optional<SigningKey> digest_key) {
  GRIDCAST_RETURN_IF_ERROR(ValidatePlan(plan));
  const PayloadIdentity& payload = store->identity();
  if (payload.size_bytes != plan.payload_bytes || payload.chunk_bytes != plan.chunk_bytes) {
    return Status::FailedPrecondition(
        "the payload is " + std::to_string(payload.size_bytes) + " bytes in chunks of " +
        std::to_string(payload.chunk_bytes) + ", the plan was made for " + std::to_string(plan.payload_bytes) +
        " in chunks of " + std::to_string(plan.chunk_bytes));
  }
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<PlanExecution> execution,
                            Register(id, sent, std::move(plan), 0, control_fanout, std::move(store),
                                     /*in_memory=*/false, {},
                                     std::move(digest_key)));
  return PlanRun(std::move(execution));
}

Status Participant::Start(const PlanId& id, std::chrono::steady_clock::time_point source_started) {
  std::shared_ptr<PlanExecution> execution = plans_.Find(id);
  if (execution == nullptr) return Status::NotFound("unknown plan " + ToHex(id));
  std::promise<void> started;
  boost::asio::post(io_, [execution, source_started, &started] {
    if (execution->Snapshot().state == ExecutionState::kPrepared) execution->Start(source_started);
    started.set_value();
  });
  started.get_future().wait();
  return Status::Ok();
}

Status Participant::Patch(const PlanId& id, const std::vector<PlanPatch>& patches,
                          const std::vector<KnownMember>& members) {
  std::shared_ptr<PlanExecution> execution = plans_.Find(id);
  if (execution == nullptr) return Status::NotFound("unknown plan " + ToHex(id));
  std::promise<Status> applied;
  boost::asio::post(io_, [&] { applied.set_value(execution->ApplyPatches(patches, members)); });
  return applied.get_future().get();
}

Status Participant::Stop(const PlanId& id, const std::string& reason) {
  std::shared_ptr<PlanExecution> execution = plans_.Take(id);
  if (execution == nullptr) return Status::NotFound("unknown plan " + ToHex(id));
  execution->RequestStop(reason);
  return Status::Ok();
}

}  // namespace gridcast
