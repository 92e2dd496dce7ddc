#include "daemon/participant/plan_status.h"

#include <optional>

#include "common/hex.h"
#include "proto/plan_codec.h"

namespace gridcast {
namespace {

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

}  // namespace

void PlanStatusOf(const PlanRun& run, bool observations, v1::PlanStatus* ps) {
  const ExecutionSnapshot snapshot = run.Snapshot();
  ps->set_plan_id(AsString(run.id().bytes()));
  ps->set_state(ToMemberState(snapshot.state));
  ps->set_error(snapshot.error);
  ps->set_chunks_done(snapshot.chunks_done);
  ps->set_chunks_total(snapshot.chunks_total);
  ps->set_is_source(run.IsSource());
  ps->set_reused_bytes(run.ReusedBytes());
  // A swarm's report asks libtorrent and copies its receipts: taken once, and only where it is
  // read (observations, or a settled member's sent_bytes, which the last progress sums).
  const bool settled = snapshot.state != ExecutionState::kPrepared && snapshot.state != ExecutionState::kRunning;
  const std::optional<SwarmReport> report = observations || settled ? run.Swarm() : std::nullopt;
  ps->set_sent_bytes(TrafficOf(snapshot, report).sent_bytes);
  ps->set_plan_version(static_cast<uint32_t>(snapshot.patch_version));
  for (const auto& [trouble, parent] : snapshot.lane_trouble) {
    v1::LaneTrouble* out = ps->add_lane_trouble();
    out->set_lane(static_cast<uint32_t>(trouble.lane));
    out->set_parent(parent);
    out->set_reason(RepairReasonToProto(trouble.reason));
    out->set_since_s(trouble.since_s);
    out->set_measured_bps(trouble.measured_bps);
    out->set_expected_bps(trouble.expected_bps);
  }
  if (snapshot.state == ExecutionState::kDone) {
    ps->set_chunk_list_sha256(AsString(snapshot.digest));
    ps->set_finished_s(snapshot.finished_s);
    if (run.IsSource()) {
      if (const std::optional<Digest> sha256 = run.PayloadSha256()) ps->set_sha256(AsString(*sha256));
    }
  }
  if (!observations || !report) return;
  ps->set_bin_s(report->bin_s);
  ps->set_uploaded_bytes(report->uploaded_bytes);
  for (const PeerReceipt& r : report->received) {
    v1::PeerReceipt* out = ps->add_received();
    out->set_from(r.from);
    out->set_bytes(r.bytes);
    out->set_blocks(r.blocks);
    out->set_first_s(r.first_s);
    out->set_last_s(r.last_s);
    for (uint64_t b : r.bytes_per_bin) out->add_bytes_per_bin(b);
  }
}

}  // namespace gridcast
