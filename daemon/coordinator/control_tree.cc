#include "daemon/coordinator/control_tree.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <optional>
#include <set>

#include "common/hex.h"
#include "daemon/coordinator/progress_sum.h"
#include "daemon/participant/plan_payload.h"
#include "daemon/participant/plan_status.h"
#include "proto/plan_codec.h"
#include "proto/plan_slice.h"

namespace gridcast {
namespace {

// Far more than any useful fanout; bounds the threads one call may start.
constexpr uint32_t kMaxControlFanout = 1024;

// What a call to a child may take of the time left: three quarters, so that the caller has
// time to step around a child that does not answer (ask its children itself).
std::chrono::milliseconds ChildBudget(ControlDeadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return std::max(std::chrono::milliseconds(1), left * 3 / 4);
}

v1::MemberProgress EntryFromStatus(const std::string& member, const v1::PlanStatus& status, uint64_t chunk_bytes,
                                   uint64_t payload_bytes) {
  v1::MemberProgress entry;
  entry.set_member(member);
  entry.set_state(status.state());
  entry.set_error(status.error());
  entry.set_chunks_done(status.chunks_done());
  entry.set_chunks_total(status.chunks_total());
  entry.set_bytes_done(std::min(status.chunks_done() * chunk_bytes, payload_bytes));
  entry.set_chunk_list_sha256(status.chunk_list_sha256());
  entry.set_finished_s(status.finished_s());
  *entry.mutable_received() = status.received();
  entry.set_bin_s(status.bin_s());
  entry.set_uploaded_bytes(status.uploaded_bytes());
  entry.set_sent_bytes(status.sent_bytes());
  entry.set_reused_bytes(status.reused_bytes());
  *entry.mutable_lane_trouble() = status.lane_trouble();
  entry.set_plan_version(status.plan_version());
  return entry;
}

void Merge(SubtreeReport&& part, SubtreeReport* into) {
  AddSum(part.progress, &into->progress);
  for (v1::MemberProgress& m : part.detail) into->detail.push_back(std::move(m));
}

}  // namespace

Status CheckAgreement(const std::string& member, const v1::Plan& plan, const std::string& agreement_digest,
                      const v1::PrepareResponse& echo) {
  auto differs = [&](const char* field) {
    return Status::Aborted("member '" + member + "' disagrees on " + field + "; broadcast aborted");
  };
  if (echo.member() != member) return differs("its own name");
  if (echo.plan_id() != plan.plan_id()) return differs("plan id");
  if (echo.payload_bytes() != plan.payload().size_bytes()) return differs("payload size");
  if (echo.chunk_hashes_sha256() != agreement_digest) return differs("the payload");
  if (echo.members_sha256() != AsString(MembersDigest(plan))) return differs("member list");
  return Status::Ok();
}

struct ControlTree::PlanState {
  // As this member got it (member_index = this member), with the patches since applied to its
  // slice (re-prepared children get the patched plan); guarded by request_mutex, as `patches`.
  v1::PrepareRequest request;
  std::vector<v1::PlanPatch> patches;  // every patch so far, versions 1..n
  std::mutex request_mutex;
  // Of the plan, as prepared (patches do not change them).
  std::string plan_id;
  uint64_t chunk_bytes = 0;
  uint64_t payload_bytes = 0;
  int lanes = 0;
  std::map<int, std::string> names;  // of this member's control subtree
  PlanId id{};
  int self = 0;
  int fanout = 1;
  int members = 0;
  std::string agreement_digest;
  std::string chunk_list_digest;  // the plan's, or the source's once learned; guarded by digest_mutex
  std::mutex digest_mutex;
  ControlTraffic* traffic = nullptr;
  std::atomic<bool> started{false};
  std::chrono::steady_clock::time_point source_started;  // set before `started`
  std::mutex clients_mutex;
  std::map<int, std::unique_ptr<ControlClient>> clients;  // guarded by clients_mutex

  // REQUIRES: `member` is in this member's subtree (PrepareChildren checked the plan names it).
  const std::string& Name(int member) const { return names.at(member); }
  int PatchVersion() {
    std::lock_guard<std::mutex> lock(request_mutex);
    return static_cast<int>(patches.size());
  }
};

ControlTree::ControlTree(Participant& participant, const ClusterConfig& cluster, ControlClientOptions client_options)
    : participant_(participant), cluster_(cluster), client_options_(std::move(client_options)) {}

ControlTree::~ControlTree() = default;

std::shared_ptr<ControlTree::PlanState> ControlTree::Find(const PlanId& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(id);
  return it == plans_.end() ? nullptr : it->second;
}

ControlClient& ControlTree::Client(PlanState& state, int member) {
  std::lock_guard<std::mutex> lock(state.clients_mutex);
  std::unique_ptr<ControlClient>& client = state.clients[member];
  if (client == nullptr) {
    // The address comes from this daemon's own cluster file, not from the plan: a plan only
    // names members (PrepareChildren checked that every one is in the file).
    ControlClientOptions options = client_options_;
    options.traffic = state.traffic;
    client = std::make_unique<ControlClient>(cluster_.Find(state.Name(member))->control_address, cluster_.secret,
                                             options);
  }
  return *client;
}

Result<v1::PrepareResponse> ControlTree::Prepare(const v1::PrepareRequest& request, ControlDeadline deadline) {
  if (request.control_fanout() == 0) return participant_.Prepare(request);
  // The member prepares itself while its children prepare: an in-memory payload's whole size
  // is written at Prepare (ReceiveOptions::take_memory_now), and one member after another
  // down the tree, 15 members' 256 MiB took 6 s on netgrid. The children match the chunk list
  // this member parsed, which needs no preparing.
  GRIDCAST_ASSIGN_OR_RETURN(const Digest digest, PlanAgreementDigest(request.plan()));
  auto own = std::async(std::launch::async, [this, &request] { return participant_.Prepare(request); });
  Result<uint32_t> below = PrepareChildren(request, AsString(digest), nullptr, deadline);
  GRIDCAST_ASSIGN_OR_RETURN(v1::PrepareResponse response, own.get());
  if (!below.ok()) return below.status();
  response.set_subtree_agreed(1 + *below);
  return response;
}

Result<uint32_t> ControlTree::PrepareFromSource(const v1::PrepareRequest& request,
                                                const std::string& agreement_digest, ControlTraffic* traffic,
                                                ControlDeadline deadline) {
  if (request.member_index() != 0) return Status::InvalidArgument("the source is member 0");
  return PrepareChildren(request, agreement_digest, traffic, deadline);
}

Result<uint32_t> ControlTree::PrepareChildren(const v1::PrepareRequest& request, const std::string& agreement_digest,
                                              ControlTraffic* traffic, ControlDeadline deadline) {
  if (request.control_fanout() == 0 || request.control_fanout() > kMaxControlFanout) {
    return Status::InvalidArgument("control fanout " + std::to_string(request.control_fanout()) +
                                   " is not in 1.." + std::to_string(kMaxControlFanout));
  }
  const v1::Plan& plan = request.plan();
  GRIDCAST_ASSIGN_OR_RETURN(PlanId id, PlanId::FromBytes(plan.plan_id()));
  if (request.member_index() >= WholeMemberCount(plan)) {
    return Status::InvalidArgument("member index " + std::to_string(request.member_index()) + " is not in the plan");
  }
  auto state = std::make_shared<PlanState>();
  state->id = id;
  state->self = static_cast<int>(request.member_index());
  state->fanout = static_cast<int>(request.control_fanout());
  state->members = static_cast<int>(WholeMemberCount(plan));
  state->traffic = traffic;
  state->agreement_digest = agreement_digest;
  GRIDCAST_ASSIGN_OR_RETURN(const std::optional<Digest> list, PlanChunkListDigest(plan));
  if (list) state->chunk_list_digest = AsString(*list);
  for (int member : ControlSubtree(state->self, state->members, state->fanout)) {
    const v1::Member* named = FindMember(plan, static_cast<uint32_t>(member));
    if (named == nullptr) {
      return Status::InvalidArgument("the plan does not name member " + std::to_string(member) +
                                     " of this member's control subtree");
    }
    if (cluster_.Find(named->name()) == nullptr) {
      return Status::InvalidArgument("member '" + named->name() + "' is not in this daemon's cluster file");
    }
    state->names[member] = named->name();
  }
  state->plan_id = plan.plan_id();
  state->chunk_bytes = plan.payload().chunk_bytes();
  state->payload_bytes = plan.payload().size_bytes();
  state->lanes = plan.lanes_size();
  state->request = request;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_[id] = state;  // a repeated Prepare (its parent re-prepares a subtree) starts afresh
  }
  const std::vector<int> children = ControlChildren(state->self, state->members, state->fanout);
  uint32_t total = 0;
  for (const Result<uint32_t>& agreed : calls_.ForEach<Result<uint32_t>>(
           children, [&](int child) { return PrepareSubtree(*state, child, deadline); })) {
    if (!agreed.ok()) return agreed.status();
    total += *agreed;
  }
  return total;
}

Result<uint32_t> ControlTree::PrepareSubtree(PlanState& state, int child, ControlDeadline deadline) {
  // The child learns what its subtree needs, not the whole plan (k slices leave the source).
  v1::PrepareRequest request;
  {
    std::lock_guard<std::mutex> lock(state.request_mutex);
    const v1::PrepareRequest& own = state.request;
    *request.mutable_plan() = SlicePlan(own.plan(), ControlSubtree(child, state.members, state.fanout));
    request.set_member_index(static_cast<uint32_t>(child));
    request.set_timeout_s(own.timeout_s());
    request.set_in_memory(own.in_memory());
    request.set_take_memory_lazily(own.take_memory_lazily());
    request.set_into_registered_memory(own.into_registered_memory());
    request.set_control_fanout(own.control_fanout());
  }
  v1::PrepareResponse echo;
  const std::string& name = state.Name(child);
  ControlClient& client = Client(state, child);
  Status status = client.Prepare(request, &echo, ChildBudget(deadline));
  if (!status.ok() && !client.Connected()) {  // no answer at all: down, or a firewall, not a no
    return NameUnreachable(status, client, name, cluster_.Find(name)->control_address);
  }
  if (!status.ok()) return status.WithContext("member '" + name + "' refused the plan");
  GRIDCAST_RETURN_IF_ERROR(CheckAgreement(name, request.plan(), state.agreement_digest, echo));
  const auto expected = ControlSubtree(child, state.members, state.fanout).size();
  if (echo.subtree_agreed() != expected) {
    return Status::Aborted("member '" + name + "' answered for " + std::to_string(echo.subtree_agreed()) + " of the " +
                           std::to_string(expected) + " members of its subtree");
  }
  return echo.subtree_agreed();
}

Status ControlTree::Start(const PlanId& id, std::chrono::steady_clock::time_point source_started,
                          ControlDeadline deadline) {
  std::shared_ptr<PlanState> state = Find(id);
  if (state == nullptr) return participant_.Start(id, source_started);
  state->source_started = source_started;
  state->started = true;  // from now on a child prepared again is started too
  // This member first: its children are prepared and take its connections before their Start.
  GRIDCAST_RETURN_IF_ERROR(participant_.Start(id, source_started));
  const std::vector<int> children = ControlChildren(state->self, state->members, state->fanout);
  for (const Status& s : calls_.ForEach<Status>(children, [&](int child) { return StartSubtree(*state, child, deadline); })) {
    GRIDCAST_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status ControlTree::StartSubtree(PlanState& state, int child, ControlDeadline deadline) {
  v1::StartRequest start;
  start.set_plan_id(state.plan_id);
  start.set_source_started_ago_s(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - state.source_started).count());
  ControlClient& client = Client(state, child);
  const Status status = client.Start(start, ChildBudget(deadline));
  if (status.ok()) return status;
  if (status.code() != StatusCode::kUnavailable && client.Connected()) {
    return status.WithContext("member '" + state.Name(child) + "' did not start");
  }
  // Gone since its Prepare (killed: its port refuses, or its connection dropped mid-call,
  // which gRPC may not call unavailable): the members below it start from here, as if
  // it had failed a moment later. The progress rounds find it unreachable, give it up or
  // prepare it again when it comes back (Start is idempotent).
  spdlog::warn("plan {}: member {} did not answer its Start ({}); starting the members below it",
               ToHex(state.id), state.Name(child), status.message());
  for (const Status& s : calls_.ForEach<Status>(ControlChildren(child, state.members, state.fanout),
                                                [&](int g) { return StartSubtree(state, g, deadline); })) {
    GRIDCAST_RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

Status ControlTree::Cancel(const PlanId& id, const std::string& reason, ControlDeadline deadline) {
  std::shared_ptr<PlanState> state;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(id);
    if (it != plans_.end()) {
      state = it->second;
      plans_.erase(it);
      if (cancel_reasons_.size() == kCancelReasonsKept) cancel_reasons_.pop_front();
      cancel_reasons_.emplace_back(id, reason);
    }
  }
  if (state == nullptr) return participant_.Stop(id, reason);
  const std::vector<int> children = ControlChildren(state->self, state->members, state->fanout);
  calls_.ForEach<bool>(children, [&](int child) {
    CancelSubtree(*state, child, reason, deadline);
    return true;
  });
  (void)participant_.Stop(id, reason);
  return Status::Ok();
}

std::optional<std::string> ControlTree::CancelReason(const PlanId& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [cancelled, reason] : cancel_reasons_) {
    if (cancelled == id) return reason;
  }
  return std::nullopt;
}

void ControlTree::CancelSubtree(PlanState& state, int child, const std::string& reason, ControlDeadline deadline) {
  v1::CancelRequest cancel;
  cancel.set_plan_id(state.plan_id);
  cancel.set_reason(reason);
  const Status status = Client(state, child).Cancel(cancel, ChildBudget(deadline));
  if (status.ok() || status.code() == StatusCode::kNotFound) return;
  // Silent: release what is below it ourselves.
  const std::vector<int> grandchildren = ControlChildren(child, state.members, state.fanout);
  calls_.ForEach<bool>(grandchildren, [&](int g) {
    CancelSubtree(state, g, reason, deadline);
    return true;
  });
}

Result<uint32_t> ControlTree::Patch(const v1::PatchRequest& request, ControlDeadline deadline) {
  GRIDCAST_ASSIGN_OR_RETURN(const PlanId id, PlanId::FromBytes(request.plan_id()));
  std::shared_ptr<PlanState> state = Find(id);
  if (state == nullptr) return Status::NotFound("plan " + ToHex(id) + " was not prepared with a control tree");
  std::vector<PlanPatch> patches;
  std::vector<KnownMember> named;
  for (const v1::PlanPatch& wire : request.patches()) {
    GRIDCAST_ASSIGN_OR_RETURN(PlanPatch patch,
                              PatchFromProto(wire, static_cast<size_t>(state->members), static_cast<size_t>(state->lanes)));
    patches.push_back(std::move(patch));
    for (int i = 0; i < wire.members_size() && i < wire.member_index_size(); ++i) {
      if (wire.member_index(i) >= static_cast<uint32_t>(state->members)) {
        return Status::InvalidArgument("a plan patch names member " + std::to_string(wire.member_index(i)));
      }
      named.push_back({static_cast<int>(wire.member_index(i)), wire.members(i).name(), wire.members(i).data_address()});
    }
  }
  {
    std::lock_guard<std::mutex> lock(state->request_mutex);
    const std::vector<int> subtree = ControlSubtree(state->self, state->members, state->fanout);
    for (const v1::PlanPatch& wire : request.patches()) {
      if (wire.version() > state->request.plan().patch_version()) {
        ApplyPatchToSlice(state->request.mutable_plan(), wire, subtree);
      }
    }
    if (static_cast<size_t>(request.patches_size()) > state->patches.size()) {
      state->patches.assign(request.patches().begin(), request.patches().end());
    }
  }
  // This member first (its moves start and stop its senders), then its subtree, whatever it said.
  const Status own = participant_.Patch(id, patches, named);
  if (!own.ok()) spdlog::warn("plan {}: a patch was not applied here: {}", ToHex(id), own.ToString());
  uint32_t patched = own.ok() ? 1 : 0;
  const std::vector<int> children = ControlChildren(state->self, state->members, state->fanout);
  for (uint32_t below : calls_.ForEach<uint32_t>(children, [&](int child) { return PatchSubtree(*state, child, deadline); })) {
    patched += below;
  }
  return patched;
}

uint32_t ControlTree::PatchSubtree(PlanState& state, int child, ControlDeadline deadline) {
  v1::PatchRequest request;
  request.set_plan_id(state.plan_id);
  {
    std::lock_guard<std::mutex> lock(state.request_mutex);
    request.mutable_patches()->Assign(state.patches.begin(), state.patches.end());
  }
  if (request.patches().empty()) return 0;
  v1::PatchResponse response;
  const Status status = Client(state, child).Patch(request, &response, ChildBudget(deadline));
  const uint32_t subtree = static_cast<uint32_t>(ControlSubtree(child, state.members, state.fanout).size());
  if (status.ok()) return std::min(response.subtree_patched(), subtree);
  spdlog::warn("plan {}: member {} was not patched ({}); patching the members below it", ToHex(state.id),
               state.Name(child), status.ToString());
  // Silent or refusing: the members below it get the patches from here (the dead member is
  // often someone's control parent).
  uint32_t patched = 0;
  for (uint32_t below : calls_.ForEach<uint32_t>(ControlChildren(child, state.members, state.fanout),
                                                [&](int g) { return PatchSubtree(state, g, deadline); })) {
    patched += below;
  }
  return patched;
}

std::string ControlTree::ListDigestOf(PlanState& state, const std::string& learned) {
  std::lock_guard<std::mutex> lock(state.digest_mutex);
  if (state.chunk_list_digest.empty() && learned.size() == sizeof(Digest)) state.chunk_list_digest = learned;
  return state.chunk_list_digest;
}

Result<SubtreeReport> ControlTree::PollBelow(const PlanId& id, PollDetail detail, ControlDeadline deadline,
                                             const std::string& chunk_list_digest) {
  std::shared_ptr<PlanState> state = Find(id);
  if (state == nullptr) return Status::NotFound("plan " + ToHex(id) + " was not prepared with a control tree");
  const std::string list = ListDigestOf(*state, chunk_list_digest);
  const std::vector<int> children = ControlChildren(state->self, state->members, state->fanout);
  SubtreeReport all;
  for (SubtreeReport& part : calls_.ForEach<SubtreeReport>(children, [&](int child) {
         SubtreeReport below;
         PollSubtree(*state, list, child, detail, deadline, &below);
         return below;
       })) {
    Merge(std::move(part), &all);
  }
  return all;
}

Result<SubtreeReport> ControlTree::PollWhole(const PlanId& id, PollDetail detail, ControlDeadline deadline,
                                             const std::string& chunk_list_digest) {
  std::shared_ptr<PlanState> state = Find(id);
  const std::optional<PlanRun> run = participant_.plans().FindRun(id);
  if (state == nullptr || !run) return Status::NotFound("plan " + ToHex(id) + " does not run here");
  v1::PlanStatus status;
  PlanStatusOf(*run, detail == PollDetail::kEveryMemberWithObservations, &status);
  v1::MemberProgress entry = EntryFromStatus(participant_.name(), status, state->chunk_bytes, state->payload_bytes);
  const std::string list = ListDigestOf(*state, chunk_list_digest);
  SubtreeReport all;
  CountMember(entry, list, &all.progress);
  if (detail != PollDetail::kSums) all.detail.push_back(std::move(entry));
  GRIDCAST_ASSIGN_OR_RETURN(SubtreeReport below, PollBelow(id, detail, deadline, list));
  Merge(std::move(below), &all);
  return all;
}

void ControlTree::PollSubtree(PlanState& state, const std::string& list_digest, int child, PollDetail poll,
                              ControlDeadline deadline, SubtreeReport* out) {
  const bool detail = poll != PollDetail::kSums;
  const uint64_t chunk_bytes = state.chunk_bytes;
  const uint64_t payload_bytes = state.payload_bytes;
  const std::vector<int> subtree = ControlSubtree(child, state.members, state.fanout);
  auto note = [&](v1::MemberProgress entry) {
    CountMember(entry, list_digest, &out->progress);
    if (detail) out->detail.push_back(std::move(entry));
  };
  auto note_subtree = [&](v1::MemberState how, const std::string& error) {
    for (int m : subtree) {
      v1::MemberProgress entry;
      entry.set_member(state.Name(m));
      entry.set_state(how);
      entry.set_error(error);
      note(std::move(entry));
    }
  };
  v1::StatusRequest request;
  request.set_plan_id(state.plan_id);
  request.set_subtree(true);
  request.set_detail(detail);
  request.set_observations(poll == PollDetail::kEveryMemberWithObservations);
  request.set_chunk_list_sha256(list_digest);
  v1::StatusResponse response;
  Status status = Client(state, child).GetStatus(request, &response, ChildBudget(deadline));
  if (status.code() == StatusCode::kNotFound) {
    // The child restarted and forgot the plan: prepare its subtree again (members that kept
    // the plan answer at once), start it if the plan runs; it resumes from what it verified.
    spdlog::warn("plan {}: member {} lost the plan; preparing it again", ToHex(state.id), state.Name(child));
    status = PrepareSubtree(state, child, deadline).status();
    if (status.ok() && state.started) status = StartSubtree(state, child, deadline);
    if (!status.ok() && status.code() != StatusCode::kUnavailable) {
      note_subtree(v1::MEMBER_STATE_FAILED, status.message());
    } else {
      note_subtree(v1::MEMBER_STATE_RESUMING, "");
    }
    return;
  }
  if (status.ok() && response.plans_size() == 1) {
    // Its answer is untrusted input: it must add up to exactly the members below it.
    std::set<std::string> expected;
    for (size_t i = 1; i < subtree.size(); ++i) expected.insert(state.Name(subtree[i]));
    const v1::SubtreeProgress& sum = response.subtree_progress();
    bool consistent = sum.members() == expected.size() && sum.done() <= sum.members() &&
                      static_cast<size_t>(sum.attention_size()) <= expected.size();
    for (const v1::MemberProgress& m : sum.attention()) {
      consistent = consistent && expected.count(m.member()) != 0 &&
                   static_cast<size_t>(m.lane_trouble_size()) <= kMaxPlanLanes;
    }
    if (detail) {
      std::set<std::string> listed;
      for (const v1::MemberProgress& m : response.subtree()) listed.insert(m.member());
      consistent = consistent && listed == expected && static_cast<size_t>(response.subtree_size()) == expected.size();
    }
    if (consistent) {
      // A child that missed a patch (a call failed, or it was re-prepared from an older slice
      // meanwhile) gets every patch again, and passes them down its subtree.
      if (response.plans(0).plan_version() < static_cast<uint32_t>(state.PatchVersion())) {
        spdlog::info("plan {}: member {} runs patch {} of {}; patching its subtree", ToHex(state.id),
                     state.Name(child), response.plans(0).plan_version(), state.PatchVersion());
        (void)PatchSubtree(state, child, deadline);
      }
      note(EntryFromStatus(state.Name(child), response.plans(0), chunk_bytes, payload_bytes));
      SubtreeReport below;
      below.progress = sum;
      if (detail) below.detail.assign(response.subtree().begin(), response.subtree().end());
      Merge(std::move(below), out);
      return;
    }
    spdlog::warn("plan {}: member {} reported a subtree that does not add up; asking its members directly",
                 ToHex(state.id), state.Name(child));
  }
  // Silent (or confused): say so, and ask its children ourselves.
  v1::MemberProgress silent;
  silent.set_member(state.Name(child));
  silent.set_state(v1::MEMBER_STATE_UNREACHABLE);
  note(std::move(silent));
  const std::vector<int> grandchildren = ControlChildren(child, state.members, state.fanout);
  for (SubtreeReport& part : calls_.ForEach<SubtreeReport>(grandchildren, [&](int g) {
         SubtreeReport below;
         PollSubtree(state, list_digest, g, poll, deadline, &below);
         return below;
       })) {
    Merge(std::move(part), out);
  }
}

}  // namespace gridcast
