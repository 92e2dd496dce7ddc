#include "proto/plan_codec.h"

#include <algorithm>
#include <string>

#include "collectives/validate_plan.h"
#include "proto/plan_slice.h"

namespace gridcast {

namespace {

void RangeToProto(const ChunkRange& range, v1::ChunkRange* out) {
  out->set_begin(range.begin);
  out->set_end(range.end);
  out->set_step(range.step);
}

ChunkRange RangeFromProto(const v1::ChunkRange& r) {
  return {r.begin(), r.end(), r.step() == 0 ? 1 : r.step()};
}

void SwarmToProto(const Swarm& swarm, v1::Swarm* out) {
  out->set_source(static_cast<uint32_t>(swarm.source));
  out->set_free_choice(swarm.free_choice);
  out->set_source_upload_slots(static_cast<uint32_t>(swarm.source_upload_slots));
  out->clear_members();
  for (const SwarmMember& m : swarm.members) {
    v1::SwarmMember* sm = out->add_members();
    sm->set_member(static_cast<uint32_t>(m.member));
    for (const ChunkRange& range : m.stripe) RangeToProto(range, sm->add_stripe());
    for (int peer : m.peers) sm->add_peers(static_cast<uint32_t>(peer));
    sm->set_upload_slots(static_cast<uint32_t>(m.upload_slots));
    sm->set_source_share_bps(m.source_share_bps);
    for (const PeerChunks& limit : m.takes_only) {
      v1::PeerChunks* out_limit = sm->add_takes_only();
      out_limit->set_peer(static_cast<uint32_t>(limit.peer));
      for (const ChunkRange& range : limit.chunks) RangeToProto(range, out_limit->add_chunks());
    }
  }
}

}  // namespace

void PlanToProto(const Plan& plan, v1::Plan* out) {
  out->set_algorithm(plan.algorithm);
  out->set_rationale(plan.rationale);
  out->set_mode(PlanModeToProto(plan.mode));
  out->set_shared_chunks(plan.shared_chunks);
  out->set_window_chunks(static_cast<uint32_t>(plan.window_chunks));
  out->set_patch_version(static_cast<uint32_t>(plan.patch_version));
  v1::Payload* payload = out->mutable_payload();
  payload->set_size_bytes(plan.payload_bytes);
  payload->set_chunk_bytes(plan.chunk_bytes);
  out->clear_members();
  for (const std::string& name : plan.members) out->add_members()->set_name(name);
  out->clear_lanes();
  for (const Lane& lane : plan.lanes) {
    v1::Lane* l = out->add_lanes();
    l->set_source(static_cast<uint32_t>(lane.source));
    l->set_streams(static_cast<uint32_t>(lane.streams));
    l->set_planned_bps(lane.planned_bps);
    for (const ChunkRange& range : lane.chunks) RangeToProto(range, l->add_chunks());
    for (const Fanout& fanout : lane.fanouts) {
      v1::Fanout* f = l->add_fanouts();
      f->set_parent(static_cast<uint32_t>(fanout.parent));
      for (int child : fanout.children) f->add_children(static_cast<uint32_t>(child));
      for (int streams : fanout.streams) f->add_streams(static_cast<uint32_t>(streams));
    }
  }
  if (!plan.HasSwarm()) {
    out->clear_swarm();
  } else {
    SwarmToProto(plan.swarm, out->mutable_swarm());
  }
}

namespace {

// Indices are validated by ValidatePlan; the parsers only keep them from overflowing int:
// an index at or past the `members` count becomes -1.
int AsIndex(uint32_t value, int64_t members) { return value < members ? static_cast<int>(value) : -1; }
// More upload slots than members is the same as one per member.
int AsSlots(uint32_t value, int64_t members) { return static_cast<int>(std::min<int64_t>(value, members)); }

// The member names by whole-plan index; a slice's unlisted members get empty names.
Result<std::vector<std::string>> ParseMembers(const v1::Plan& in, int64_t members) {
  std::vector<std::string> names;
  if (in.member_count() == 0) {
    if (in.member_index_size() > 0) return Status::InvalidArgument("plan lists member indices but no member count");
    for (const v1::Member& member : in.members()) names.push_back(member.name());
    return names;
  }
  if (in.member_index_size() != in.members_size()) {
    return Status::InvalidArgument("plan slice lists " + std::to_string(in.members_size()) + " members and " +
                                   std::to_string(in.member_index_size()) + " indices");
  }
  names.resize(static_cast<size_t>(members));
  for (int i = 0; i < in.members_size(); ++i) {
    const uint32_t index = in.member_index(i);
    if (index >= members || (i > 0 && index <= in.member_index(i - 1))) {
      return Status::InvalidArgument("plan slice member indices are not increasing below the member count");
    }
    if (in.members(i).name().empty()) return Status::InvalidArgument("plan has a member without a name");
    names[index] = in.members(i).name();
  }
  return names;
}

Result<Lane> ParseLane(const v1::Lane& l, int64_t members) {
  Lane lane;
  lane.source = AsIndex(l.source(), members);
  lane.streams = l.streams() == 0 ? 1 : static_cast<int>(std::min<uint32_t>(l.streams(), kMaxStreamsPerEdge));
  lane.planned_bps = l.planned_bps();
  if (l.chunks_size() > static_cast<int>(kMaxPlanChunks)) {
    return Status::InvalidArgument("plan lane has too many chunk ranges");
  }
  for (const v1::ChunkRange& r : l.chunks()) lane.chunks.push_back(RangeFromProto(r));
  if (l.fanouts_size() > members) return Status::InvalidArgument("plan lane has more fanouts than members");
  for (const v1::Fanout& f : l.fanouts()) {
    Fanout fanout;
    fanout.parent = AsIndex(f.parent(), members);
    if (f.children_size() > members) return Status::InvalidArgument("plan fanout has too many children");
    for (uint32_t child : f.children()) fanout.children.push_back(AsIndex(child, members));
    for (uint32_t streams : f.streams()) {
      if (streams > static_cast<uint32_t>(kMaxStreamsPerEdge)) {
        return Status::InvalidArgument("plan asks for more than " + std::to_string(kMaxStreamsPerEdge) +
                                       " streams per edge");
      }
      fanout.streams.push_back(static_cast<int>(streams));
    }
    lane.fanouts.push_back(std::move(fanout));
  }
  return lane;
}

Result<Swarm> ParseSwarm(const v1::Swarm& s, int64_t members) {
  if (s.members_size() > members) return Status::InvalidArgument("plan swarm has more entries than members");
  Swarm swarm;
  swarm.source = AsIndex(s.source(), members);
  swarm.free_choice = s.free_choice();
  swarm.source_upload_slots = AsSlots(s.source_upload_slots(), members);
  for (const v1::SwarmMember& sm : s.members()) {
    if (sm.peers_size() > members || sm.takes_only_size() > members) {
      return Status::InvalidArgument("plan swarm member has too many peers");
    }
    if (sm.stripe_size() > static_cast<int>(kMaxPlanChunks)) {
      return Status::InvalidArgument("plan swarm member has too many chunk ranges");
    }
    SwarmMember m;
    m.member = AsIndex(sm.member(), members);
    for (const v1::ChunkRange& r : sm.stripe()) m.stripe.push_back(RangeFromProto(r));
    for (uint32_t peer : sm.peers()) m.peers.push_back(AsIndex(peer, members));
    m.upload_slots = AsSlots(sm.upload_slots(), members);
    m.source_share_bps = sm.source_share_bps();
    for (const v1::PeerChunks& limit : sm.takes_only()) {
      if (limit.chunks_size() > members) {  // a planner's are a few stripes of a group's copy
        return Status::InvalidArgument("plan swarm member takes too many chunk ranges from a peer");
      }
      PeerChunks& back = m.takes_only.emplace_back();
      back.peer = AsIndex(limit.peer(), members);
      for (const v1::ChunkRange& r : limit.chunks()) back.chunks.push_back(RangeFromProto(r));
    }
    swarm.members.push_back(std::move(m));
  }
  return swarm;
}

// Bounds every count and index, and expands a slice to the whole plan's indices (members it
// does not list get empty names); does not validate.
Result<Plan> ParsePlan(const v1::Plan& in) {
  Plan plan;
  plan.algorithm = in.algorithm();
  plan.rationale = in.rationale();
  GRIDCAST_ASSIGN_OR_RETURN(plan.mode, PlanModeFromProto(in.mode()));
  plan.shared_chunks = in.shared_chunks();
  if (in.window_chunks() > kMaxPlanWindowChunks) {
    return Status::InvalidArgument("plan window of " + std::to_string(in.window_chunks()) + " chunks; the limit is " +
                                   std::to_string(kMaxPlanWindowChunks));
  }
  plan.window_chunks = static_cast<int>(in.window_chunks());
  if (in.patch_version() > kMaxPatchVersion) return Status::InvalidArgument("plan patched too many times");
  plan.patch_version = static_cast<int>(in.patch_version());
  plan.payload_bytes = in.payload().size_bytes();
  plan.chunk_bytes = in.payload().chunk_bytes();
  if (plan.chunk_bytes == 0) return Status::InvalidArgument("plan chunk size is 0");
  if (plan.NumChunks() > kMaxPlanChunks) {
    return Status::InvalidArgument("plan has " + std::to_string(plan.NumChunks()) +
                                   " chunks; the limit is " + std::to_string(kMaxPlanChunks));
  }
  const int64_t members = WholeMemberCount(in);
  if (static_cast<size_t>(members) > kMaxPlanMembers || in.members_size() > members) {
    return Status::InvalidArgument("plan has too many members");
  }
  if (static_cast<size_t>(in.lanes_size()) > kMaxPlanLanes) {
    return Status::InvalidArgument("plan has too many lanes");
  }
  GRIDCAST_ASSIGN_OR_RETURN(plan.members, ParseMembers(in, members));
  for (const v1::Lane& l : in.lanes()) {
    GRIDCAST_ASSIGN_OR_RETURN(Lane lane, ParseLane(l, members));
    plan.lanes.push_back(std::move(lane));
  }
  if (plan.HasSwarm()) {
    GRIDCAST_ASSIGN_OR_RETURN(plan.swarm, ParseSwarm(in.swarm(), members));
  }
  return plan;
}

}  // namespace

Result<Plan> PlanFromProto(const v1::Plan& in) {
  if (in.member_count() > 0) return Status::InvalidArgument("a slice of a plan where the whole plan is needed");
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, ParsePlan(in));
  GRIDCAST_RETURN_IF_ERROR(ValidatePlan(plan));
  return plan;
}

Result<Plan> PlanPartFromProto(const v1::Plan& in, int member) {
  GRIDCAST_ASSIGN_OR_RETURN(Plan plan, ParsePlan(in));
  GRIDCAST_RETURN_IF_ERROR(ValidatePlanPart(plan, member));
  return plan;
}

v1::RepairReason RepairReasonToProto(RepairReason reason) {
  switch (reason) {
    case RepairReason::kGone:
      return v1::REPAIR_REASON_GONE;
    case RepairReason::kSilent:
      return v1::REPAIR_REASON_SILENT;
    case RepairReason::kSlow:
      return v1::REPAIR_REASON_SLOW;
  }
  return v1::REPAIR_REASON_UNSPECIFIED;
}

Result<RepairReason> RepairReasonFromProto(v1::RepairReason reason) {
  switch (reason) {
    case v1::REPAIR_REASON_GONE:
      return RepairReason::kGone;
    case v1::REPAIR_REASON_SILENT:
      return RepairReason::kSilent;
    case v1::REPAIR_REASON_SLOW:
      return RepairReason::kSlow;
    default:
      return Status::InvalidArgument("no repair reason");
  }
}

void PatchToProto(const PlanPatch& patch, v1::PlanPatch* out) {
  out->set_version(static_cast<uint32_t>(patch.version));
  out->clear_failures();
  for (const Failure& f : patch.failures) {
    v1::RepairFailure* failure = out->add_failures();
    failure->set_member(static_cast<uint32_t>(f.member));
    failure->set_reason(RepairReasonToProto(f.reason));
    failure->set_measured_bps(f.measured_bps);
  }
  out->clear_moves();
  for (const EdgeMove& m : patch.moves) {
    v1::EdgeMove* move = out->add_moves();
    move->set_lane(static_cast<uint32_t>(m.lane));
    move->set_child(static_cast<uint32_t>(m.child));
    move->set_old_parent(static_cast<uint32_t>(m.old_parent));
    move->set_new_parent(static_cast<uint32_t>(m.new_parent));
    move->set_streams(static_cast<uint32_t>(m.streams));
  }
}

Result<PlanPatch> PatchFromProto(const v1::PlanPatch& in, size_t members, size_t lanes) {
  if (in.version() == 0 || in.version() > kMaxPatchVersion) {
    return Status::InvalidArgument("a plan patch of version " + std::to_string(in.version()));
  }
  if (static_cast<size_t>(in.failures_size()) > members ||
      static_cast<size_t>(in.moves_size()) > members * std::max<size_t>(lanes, 1)) {
    return Status::InvalidArgument("a plan patch with more failures or moves than the plan has members and edges");
  }
  PlanPatch patch;
  patch.version = static_cast<int>(in.version());
  const auto index = [members](uint32_t value, const char* what) -> Result<int> {
    if (value >= members) return Status::InvalidArgument(std::string("a plan patch names ") + what + " " + std::to_string(value));
    return static_cast<int>(value);
  };
  for (const v1::RepairFailure& f : in.failures()) {
    Failure failure;
    GRIDCAST_ASSIGN_OR_RETURN(failure.member, index(f.member(), "member"));
    Result<RepairReason> reason = RepairReasonFromProto(f.reason());
    if (!reason.ok()) return Status::InvalidArgument("a plan patch gives a failure no reason");
    failure.reason = *reason;
    if (!(f.measured_bps() >= 0)) return Status::InvalidArgument("a plan patch measured a negative rate");
    failure.measured_bps = f.measured_bps();
    patch.failures.push_back(failure);
  }
  for (const v1::EdgeMove& m : in.moves()) {
    EdgeMove move;
    if (m.lane() >= lanes) return Status::InvalidArgument("a plan patch names lane " + std::to_string(m.lane()));
    move.lane = static_cast<int>(m.lane());
    GRIDCAST_ASSIGN_OR_RETURN(move.child, index(m.child(), "member"));
    GRIDCAST_ASSIGN_OR_RETURN(move.old_parent, index(m.old_parent(), "member"));
    GRIDCAST_ASSIGN_OR_RETURN(move.new_parent, index(m.new_parent(), "member"));
    if (m.streams() > static_cast<uint32_t>(kMaxStreamsPerEdge)) {
      return Status::InvalidArgument("a plan patch asks for more than " + std::to_string(kMaxStreamsPerEdge) +
                                     " streams per edge");
    }
    move.streams = static_cast<int>(m.streams());
    patch.moves.push_back(move);
  }
  return patch;
}

bool PlanHasSwarm(const v1::Plan& plan) {
  const Result<PlanMode> mode = PlanModeFromProto(plan.mode());
  return mode.ok() && ModeHasSwarm(*mode);
}

Result<PlanMode> PlanModeFromProto(int value) {
  // The wire's values are PlanMode's (PlanModeToProto); 0 is the wire's UNSPECIFIED.
  for (const PlanModeRow& row : kPlanModeRows) {
    if (static_cast<int>(row.mode) == value) return row.mode;
  }
  return Status::InvalidArgument("plan mode is not set");
}

v1::PlanMode PlanModeToProto(PlanMode mode) { return static_cast<v1::PlanMode>(mode); }

Result<ChunkDigest> ChunkDigestFromProto(int value) {
  if (value == v1::CHUNK_DIGEST_UNSPECIFIED) return ChunkDigest::kSha256;
  return ChunkDigestFromValue(static_cast<uint32_t>(value));
}

v1::ChunkDigest ChunkDigestToProto(ChunkDigest digest) { return static_cast<v1::ChunkDigest>(digest); }

}  // namespace gridcast
