#include "daemon/participant.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <boost/asio/post.hpp>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

#include "cluster/cluster_file.h"
#include "collectives/validate_plan.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "daemon/request_checks.h"
#include "daemon/store/allgather_bundle.h"
#include "daemon/store/directory_archive.h"
#include "proto/plan_codec.h"
#include "proto/plan_slice.h"

namespace gridcast {
namespace {

Result<PayloadIdentity> IdentityFromProto(const v1::Payload& payload) {
  GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(payload.chunk_bytes()));
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(payload.digest()));
  return DecodePayloadIdentity(digest, payload.size_bytes(), payload.chunk_bytes(), payload.chunk_hashes(),
                               payload.sha256());
}

std::vector<BundlePart> BundlePartsFromProto(const v1::Payload& payload) {
  std::vector<BundlePart> parts;
  for (const v1::Part& p : payload.parts()) {
    parts.push_back(BundlePart{p.member(), p.name(), p.size_bytes(), p.first_chunk(), p.chunks(), p.path(), p.in_memory()});
  }
  return parts;
}

v1::MemberState ToMemberState(ExecutionState state) {
  switch (state) {
    case ExecutionState::kPrepared: return v1::MEMBER_STATE_PREPARED;
    case ExecutionState::kRunning: return v1::MEMBER_STATE_RUNNING;
    case ExecutionState::kDone: return v1::MEMBER_STATE_DONE;
    case ExecutionState::kFailed: return v1::MEMBER_STATE_FAILED;
    case ExecutionState::kStopped: return v1::MEMBER_STATE_STOPPED;
  }
  return v1::MEMBER_STATE_UNSPECIFIED;
}

// A regular file opened for reading (not a symlink at its last step, not a device or FIFO).
Result<int> OpenRegularFile(const std::filesystem::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::NotFound("cannot open " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(path.string() + " is not a regular file");
  }
  return fd;
}

}  // namespace

void PlanStatusOf(const PlanExecution& plan, bool observations, v1::PlanStatus* ps) {
  const ExecutionSnapshot snapshot = plan.Snapshot();
  ps->set_plan_id(AsString(plan.id()));
  ps->set_state(ToMemberState(snapshot.state));
  ps->set_error(snapshot.error);
  ps->set_chunks_done(snapshot.chunks_done);
  ps->set_chunks_total(snapshot.chunks_total);
  ps->set_is_source(plan.self() == 0);
  if (snapshot.state == ExecutionState::kDone) {
    ps->set_chunk_list_sha256(AsString(snapshot.digest));
    ps->set_finished_s(snapshot.finished_s);
    if (plan.self() == 0) {
      const Digest& whole = plan.store().identity().sha256;
      ps->set_sha256(AsString(whole));
    }
  }
  if (observations && plan.swarm()) {
    const SwarmReport report = plan.swarm()->Report();
    ps->set_bin_s(report.bin_s);
    ps->set_uploaded_bytes(report.uploaded_bytes);
    for (const PeerReceipt& r : report.received) {
      v1::PeerReceipt* out = ps->add_received();
      out->set_from(r.from);
      out->set_bytes(r.bytes);
      out->set_blocks(r.blocks);
      out->set_first_s(r.first_s);
      out->set_last_s(r.last_s);
      for (uint64_t b : r.bytes_per_bin) out->add_bytes_per_bin(b);
    }
  }
}

Result<v1::DescribePartResponse> Participant::DescribePart(const v1::DescribePartRequest& request) const {
  GRIDCAST_RETURN_IF_ERROR(CheckDescribePartRequest(request));
  GRIDCAST_ASSIGN_OR_RETURN(const std::filesystem::path path,
                            ResolveSendPath(request.path(), options_.data_dir, options_.memory_dir, options_.send_roots,
                                            request.in_memory()));
  GRIDCAST_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  struct stat st {};
  fstat(fd, &st);
  v1::DescribePartResponse response;
  response.set_size_bytes(static_cast<uint64_t>(st.st_size));
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(request.digest()));
  Result<std::vector<Digest>> hashes =
      request.chunk_bytes() == 0 ? std::vector<Digest>{}
                                 : HashPaddedChunks(fd, response.size_bytes(), request.chunk_bytes(), digest);
  close(fd);
  if (!hashes.ok()) return hashes.status().WithContext(path.string());
  response.set_chunk_hashes(EncodeChunkHashes(digest, *hashes));
  return response;
}

Result<Digest> PlanChunkListDigest(const v1::Plan& plan) {
  GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity identity, IdentityFromProto(plan.payload()));
  return identity.ListDigest();
}

Digest MembersDigest(const v1::Plan& plan) {
  Sha256Stream stream;
  auto update_u32 = [&stream](uint32_t value) {
    const std::array<uint8_t, 4> bytes = {static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
                                          static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
    stream.Update(bytes);
  };
  update_u32(WholeMemberCount(plan));
  for (int entry = 0; entry < plan.members_size(); ++entry) {
    update_u32(WholeIndexOf(plan, entry));
    stream.Update(AsBytes(plan.members(entry).name()));
    stream.Update(AsBytes(std::string_view("\0", 1)));
  }
  return stream.Finish();
}

Participant::Participant(boost::asio::io_context& io, ParticipantOptions options)
    : io_(io),
      options_(std::move(options)),
      workers_(options_.workers > 0 ? options_.workers : std::max(2u, std::thread::hardware_concurrency())) {}

std::shared_ptr<PlanExecution> Participant::FindPlan(const PlanId& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(id);
  return it == plans_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<PlanExecution>> Participant::Plans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<PlanExecution>> all;
  for (const auto& [id, plan] : plans_) all.push_back(plan);
  return all;
}

std::vector<Participant::NamedPlan> Participant::NamedPlans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<NamedPlan> all;
  for (const auto& [id, plan] : plans_) {
    const auto held = names_.find(id);
    all.push_back({plan, held == names_.end() ? "" : held->second.name, held != names_.end() && held->second.in_memory});
  }
  return all;
}

Result<std::shared_ptr<PlanExecution>> Participant::Register(const v1::Plan& proto, Plan plan, int self,
                                                      std::unique_ptr<PayloadStore> store, bool in_memory,
                                                      std::function<Status()> after_finalize) {
  GRIDCAST_ASSIGN_OR_RETURN(PlanId id, PlanIdFromBytes(proto.plan_id()));
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
  ExecutionOptions execution_options = options_.execution;
  if (in_memory) execution_options.page_cache_window_bytes = 0;  // nothing to write back
  auto execution = std::make_shared<PlanExecution>(io_, workers_, std::move(plan), id, self, std::move(addresses),
                                                   std::move(store), execution_options);
  if (after_finalize) execution->SetAfterFinalize(std::move(after_finalize));
  if (execution->plan().mode != PlanMode::kPush) {
    if (options_.torrents == nullptr) return Status::FailedPrecondition("this daemon runs no BitTorrent session");
    std::weak_ptr<PlanExecution> weak = execution;
    SwarmJoin join{proto.swarm().torrent(), execution->shared_store(), execution->plan(), self,
                   std::move(bt_addresses), [weak](bool newly) {
                     if (auto e = weak.lock()) e->OnSwarmChunkVerified(newly);
                   },
                   {}, [weak] {
                     if (auto e = weak.lock()) e->NotePayloadSent();
                   }};
    // A hybrid member's push lanes already say when a chunk may leave the page cache.
    if (execution->plan().mode == PlanMode::kPull) {
      join.on_chunk_shared = [weak](uint64_t chunk) {
        if (auto e = weak.lock()) e->OnSwarmChunkShared(chunk);
      };
    }
    GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<PullSwarm> swarm, options_.torrents->Join(std::move(join)));
    execution->AttachSwarm(std::move(swarm));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = plans_.emplace(id, execution);
  if (!inserted) return it->second;
  names_[id] = HeldName{proto.payload().name(), in_memory};
  return execution;
}

Result<v1::PrepareResponse> Participant::Prepare(const v1::PrepareRequest& request) {
  const v1::Plan& plan = request.plan();
  GRIDCAST_ASSIGN_OR_RETURN(PlanId id, PlanIdFromBytes(plan.plan_id()));
  const v1::Member* self = FindMember(plan, request.member_index());
  if (self == nullptr || self->name() != options_.name) {
    return Status::InvalidArgument("this daemon is '" + options_.name +
                                   "', not the member the plan names at index " +
                                   std::to_string(request.member_index()));
  }
  std::shared_ptr<PlanExecution> execution = FindPlan(id);
  if (execution == nullptr) {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(plan.payload().name()));
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
      if (plan.payload().directory() || plan.mode() != v1::PLAN_MODE_PUSH) {
        return Status::InvalidArgument("an allgather is pushed, and its parts are files");
      }
      GRIDCAST_RETURN_IF_ERROR(
          CheckBundleParts(parts, WholeMemberCount(plan), identity.chunk_bytes, identity.size_bytes));
      if (!request.in_memory()) GRIDCAST_RETURN_IF_ERROR(DirectoryOfBundle(plan.payload().name()).status());
    }
    GRIDCAST_ASSIGN_OR_RETURN(const NameClaim claim,
                              ClaimName(id, HeldName{plan.payload().name(), request.in_memory()}, parsed.members[0]));
    std::shared_ptr<RankMemory> lent = LentMemoryFor(request, parts.empty());
    GRIDCAST_ASSIGN_OR_RETURN(
        std::unique_ptr<PayloadStore> store,
        lent != nullptr ? PayloadStore::OpenForRankMemory(plan.payload().name(), std::move(identity), lent)
                        : PayloadStore::OpenForReceive(DirectoryOf(request.in_memory()), plan.payload().name(),
                                                       std::move(identity), SystemFileIo(),
                                                       request.in_memory() && request.take_memory_lazily()
                                                           ? PayloadStore::Space::kCheckFree
                                                           : PayloadStore::Space::kReserve));
    const uint64_t held_before = store->VerifiedCount();  // before this member's own allgather part
    for (const BundlePart& part : parts) {
      if (part.member == request.member_index()) GRIDCAST_RETURN_IF_ERROR(SeedOwnPart(*store, part));
    }
    // In memory and pushed (one writer per chunk): chunks are received into their final pages.
    if (lent == nullptr && request.in_memory() && plan.mode() == v1::PLAN_MODE_PUSH) {
      GRIDCAST_RETURN_IF_ERROR(store->MapForReceiving());
    }
    if (lent == nullptr && request.in_memory() && !request.take_memory_lazily()) {
      GRIDCAST_RETURN_IF_ERROR(store->TouchUnheldChunks());
    }
    std::function<Status()> after_finalize;
    if (plan.payload().directory()) {
      after_finalize = [data_dir = options_.data_dir, name = plan.payload().name(), tag = ToHex(id),
                        sync = options_.execution.sync_on_finish] {
        return UnpackDirectoryPayload(data_dir, name, tag, sync);
      };
    } else if (!parts.empty() && !request.in_memory()) {
      after_finalize = [data_dir = options_.data_dir, name = plan.payload().name(), parts, tag = ToHex(id),
                        chunk_bytes = plan.payload().chunk_bytes(), sync = options_.execution.sync_on_finish] {
        return SplitBundle(data_dir, name, parts, chunk_bytes, tag, sync);
      };
    }
    GRIDCAST_ASSIGN_OR_RETURN(execution, Register(plan, std::move(parsed), static_cast<int>(request.member_index()),
                                                  std::move(store), request.in_memory(), std::move(after_finalize)));
    if (held_before > 0 && options_.execution.counters) options_.execution.counters->Resumed(held_before);
    spdlog::info("prepared plan {} ({}, {} bytes, {} of {} chunks held; told of {} of {} members)", ToHex(id),
                 plan.payload().name(), plan.payload().size_bytes(), execution->store().VerifiedCount(),
                 execution->store().identity().NumChunks(), plan.members_size(), WholeMemberCount(plan));
  }
  v1::PrepareResponse response;
  response.set_member(options_.name);
  response.set_plan_id(plan.plan_id());
  response.set_payload_bytes(plan.payload().size_bytes());
  // The list this member parsed and will verify against, not the request's bytes.
  response.set_chunk_hashes_sha256(AsString(execution->store().identity().ListDigest()));
  response.set_members_sha256(AsString(MembersDigest(plan)));
  response.set_chunks_held(execution->store().VerifiedCount());
  return response;
}

std::shared_ptr<RankMemory> Participant::LentMemoryFor(const v1::PrepareRequest& request, bool whole_payload) const {
  const v1::Plan& plan = request.plan();
  if (!request.into_registered_memory() || !request.in_memory() || plan.mode() != v1::PLAN_MODE_PUSH ||
      plan.payload().directory() || !whole_payload || options_.rank_memory == nullptr) {
    return nullptr;
  }
  std::vector<std::shared_ptr<ProcessRegion>> regions =
      options_.rank_memory->Bind(plan.payload().name(), plan.payload().size_bytes());
  if (regions.empty()) return nullptr;
  spdlog::info("{} goes into the memory {} local process(es) lent", plan.payload().name(), regions.size());
  return std::make_shared<RankMemory>(std::move(regions), RankMemory::kKeptBytes);
}

Status Participant::SeedOwnPart(PayloadStore& store, const BundlePart& part) const {
  GRIDCAST_ASSIGN_OR_RETURN(const std::filesystem::path path,
                            ResolveSendPath(part.path, options_.data_dir, options_.memory_dir, options_.send_roots,
                                            part.in_memory));
  GRIDCAST_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  const Status seeded = SeedPart(store, fd, part);
  close(fd);
  return seeded;
}

Participant::NameClaim::~NameClaim() {
  if (owner_ == nullptr) return;
  std::lock_guard<std::mutex> lock(owner_->mutex_);
  owner_->claimed_.erase(name_);
}

Result<Participant::NameClaim> Participant::ClaimName(const PlanId& id, const HeldName& name,
                                                      const std::string& source) {
  std::vector<std::shared_ptr<PlanExecution>> replaced;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<PlanId> other;
    for (auto it = names_.begin(); it != names_.end();) {
      const auto& [plan_id, held] = *it;
      const std::shared_ptr<PlanExecution>& execution = plans_.at(plan_id);
      if (held != name || plan_id == id || execution->Snapshot().state == ExecutionState::kDone) {
        ++it;
      } else if (execution->plan().members[0] == source) {
        // The source runs one broadcast of a name at a time: it gave this one up (a cancel
        // that did not reach this member, or a restart of the source).
        spdlog::info("plan {} of '{}' is replaced by plan {} from the same source", ToHex(plan_id), name.name, ToHex(id));
        replaced.push_back(execution);
        plans_.erase(plan_id);
        it = names_.erase(it);
      } else {
        other = plan_id;
        ++it;
      }
    }
    if (auto it = claimed_.find(name); it != claimed_.end() && it->second != id) other = it->second;
    if (other) {
      return Status::FailedPrecondition("'" + name.name + "' is being received here by broadcast " + ToHex(*other) +
                                        "; wait for it to finish, cancel it (gridcast cancel " + ToHex(*other) +
                                        "), or send under another name");
    }
    if (!claimed_.emplace(name, id).second) {
      return Status::FailedPrecondition("'" + name.name + "' is being prepared here for this broadcast already");
    }
  }
  NameClaim claim(*this, name);
  // A replaced plan's last chunk writes must be over before another store opens its file.
  for (const std::shared_ptr<PlanExecution>& execution : replaced) {
    execution->RequestStop("replaced by a newer broadcast of the same name from its source");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (execution.use_count() > 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (execution.use_count() > 1) {
      return Status::Unavailable("the earlier broadcast of '" + name.name + "' here is still stopping; try again");
    }
  }
  return claim;
}

Status Participant::PrepareSource(const v1::Plan& plan, std::unique_ptr<PayloadStore> store) {
  GRIDCAST_ASSIGN_OR_RETURN(Plan parsed, PlanFromProto(plan));
  return Register(plan, std::move(parsed), 0, std::move(store), /*in_memory=*/false).status();
}

Status Participant::Start(const PlanId& id, std::chrono::steady_clock::time_point source_started) {
  std::shared_ptr<PlanExecution> execution = FindPlan(id);
  if (execution == nullptr) return Status::NotFound("unknown plan " + ToHex(id));
  std::promise<void> started;
  boost::asio::post(io_, [execution, source_started, &started] {
    if (execution->Snapshot().state == ExecutionState::kPrepared) execution->Start(source_started);
    started.set_value();
  });
  started.get_future().wait();
  return Status::Ok();
}

Status Participant::Stop(const PlanId& id, const std::string& reason) {
  std::shared_ptr<PlanExecution> execution;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(id);
    if (it == plans_.end()) return Status::NotFound("unknown plan " + ToHex(id));
    execution = it->second;
    plans_.erase(it);
    names_.erase(id);
  }
  execution->RequestStop(reason);
  return Status::Ok();
}

v1::ListResponse Participant::List(bool verify) const {
  std::map<HeldName, std::shared_ptr<PlanExecution>> running;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, held] : names_) running[held] = plans_.at(id);
  }
  v1::ListResponse response;
  response.set_data_dir(options_.data_dir);
  response.set_memory_dir(options_.memory_dir);
  ListDirectory(/*in_memory=*/false, verify, running, &response);
  if (!options_.memory_dir.empty()) ListDirectory(/*in_memory=*/true, verify, running, &response);
  return response;
}

void Participant::ListDirectory(bool in_memory, bool verify,
                                const std::map<HeldName, std::shared_ptr<PlanExecution>>& running,
                                v1::ListResponse* response) const {
  namespace fs = std::filesystem;
  const std::string& dir = DirectoryOf(in_memory);
  std::error_code ec;
  const fs::path root(dir);
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path relative = fs::relative(it->path(), root, ec);
    if (!relative.empty() && relative.begin()->string() == ".gridcast") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
    std::string name = relative.string();
    const bool partial = name.size() > 5 && name.ends_with(".part");
    if (partial) name.resize(name.size() - 5);
    v1::HeldPayload* held = response->add_payloads();
    held->set_name(name);
    held->set_complete(!partial);
    held->set_size_bytes(it->file_size(ec));
    held->set_in_memory(in_memory);
    auto known = running.find(HeldName{name, in_memory});
    if (known != running.end()) {
      const ExecutionSnapshot snapshot = known->second->Snapshot();
      held->set_chunks_verified(snapshot.chunks_done);
      held->set_chunks_total(snapshot.chunks_total);
    }
    if (partial) continue;
    Result<PayloadIdentity> recorded = PayloadStore::RecordedIdentity(dir, name);
    if (recorded.ok()) {
      held->set_sha256(AsString(recorded->sha256));
      held->set_digest(ChunkDigestToProto(recorded->digest));
    }
    if (!verify) continue;
    Result<ScrubReport> scrub = PayloadStore::Scrub(dir, name);
    if (!scrub.ok()) {
      held->set_scrub("unknown: " + scrub.status().message());
      continue;
    }
    held->set_chunks_total(scrub->chunks);
    held->set_chunks_verified(scrub->chunks - scrub->bad_chunks.size());
    held->set_scrub(scrub->bad_chunks.empty() ? "ok" : "bad");
    for (uint64_t c : scrub->bad_chunks) held->add_bad_chunks(c);
    if (!scrub->bad_chunks.empty()) {
      spdlog::warn("scrub: {} has {} bad chunks of {}", name, scrub->bad_chunks.size(), scrub->chunks);
    }
  }
}

Result<v1::ChunkMapResponse> Participant::ChunkMap(const std::string& name, bool in_memory) const {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  std::shared_ptr<PlanExecution> receiving;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, held] : names_) {
      if (held.name == name && held.in_memory == in_memory) receiving = plans_.at(id);
    }
  }
  v1::ChunkMapResponse map;
  if (receiving != nullptr) {
    const PayloadStore& store = receiving->store();
    map.set_size_bytes(store.identity().size_bytes);
    map.set_chunk_bytes(store.identity().chunk_bytes);
    const std::vector<uint8_t> bitmap = store.BitmapBytes();
    map.set_verified(AsString(bitmap));
    return map;
  }
  const std::string& dir = DirectoryOf(in_memory);
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(dir, name, /*create=*/false));
  struct stat st {};
  if (fstatat(parent.first.get(), parent.second.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound("this daemon neither receives nor holds '" + name + "'" + (in_memory ? " in memory" : ""));
  }
  map.set_size_bytes(static_cast<uint64_t>(st.st_size));
  map.set_complete(true);
  return map;
}

Status Participant::Remove(const std::string& name, bool in_memory) {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  {
    // A finished copy may go while its source still follows the broadcast (the execution stays
    // registered, and keeps the file open, until the source releases it).
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, held] : names_) {
      const bool same = held.name == name || held.name == name + kDirectoryArchiveSuffix || held.name.starts_with(name + "/");
      if (same && held.in_memory == in_memory && plans_.at(id)->Snapshot().state != ExecutionState::kDone) {
        return Status::FailedPrecondition("a broadcast of '" + name + "' is under way here");
      }
    }
  }
  const std::string& dir = DirectoryOf(in_memory);
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(dir, name, /*create=*/false));
  std::error_code ec;
  struct stat st {};
  if (fstatat(parent.first.get(), parent.second.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    // A directory payload (unpacked from NAME.tar): the tree, and the archive's chunk list.
    // remove_all removes links, never what they point to.
    std::filesystem::remove_all(std::filesystem::path(dir) / name, ec);
    if (ec) return Status::Internal("cannot remove " + name + "/: " + ec.message());
    std::filesystem::remove(PayloadStatePath(dir, name + kDirectoryArchiveSuffix, ".chunks"), ec);
    spdlog::info("removed {}/", name);
    return Status::Ok();
  }
  // A file's pages (all of an in-memory payload's memory) are freed when its last descriptor
  // closes. Held open across the unlink and closed by a worker, that happens after the answer:
  // 16 daemons freeing 256 MiB of tmpfs at once kept their callers (MPI ranks) 0.25 s.
  const int held = openat(parent.first.get(), parent.second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (unlinkat(parent.first.get(), parent.second.c_str(), 0) != 0) {
    if (held >= 0) close(held);
    // What an interrupted broadcast left (resumable until then) goes too.
    const std::string part = parent.second + ".part";
    if (unlinkat(parent.first.get(), part.c_str(), 0) == 0) {
      std::filesystem::remove(PayloadStatePath(dir, name, ".state"), ec);
      spdlog::info("removed the partial copy of {}{}", name, in_memory ? " (in memory)" : "");
      return Status::Ok();
    }
    return Status::NotFound("this daemon holds no payload '" + name + "'" + (in_memory ? " in memory" : ""));
  }
  if (held >= 0) boost::asio::post(workers_, [held] { close(held); });
  std::filesystem::remove(PayloadStatePath(dir, name, ".chunks"), ec);
  spdlog::info("removed {}{}", name, in_memory ? " (in memory)" : "");
  return Status::Ok();
}

void Participant::SweepRetention(const RetentionPolicy& data, const RetentionPolicy& memory) {
  for (const bool in_memory : {false, true}) {
    const RetentionPolicy& policy = in_memory ? memory : data;
    if (!policy.any() || DirectoryOf(in_memory).empty()) continue;
    const std::vector<std::string> chosen =
        ChooseForRemoval(ScanStore(DirectoryOf(in_memory)), std::chrono::system_clock::now(), policy);
    for (const std::string& name : chosen) {
      const Status status = Remove(name, in_memory);
      if (status.ok()) {
        spdlog::info("retention: removed {}{}", name, in_memory ? " (in memory)" : "");
      } else if (status.code() != StatusCode::kNotFound) {
        spdlog::info("retention: {} stays for now: {}", name, status.message());
      }
    }
  }
}

}  // namespace gridcast
