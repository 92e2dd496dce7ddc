#include "daemon/participant/plan_run.h"

#include <utility>

namespace gridcast {

PlanTraffic TrafficOf(const ExecutionSnapshot& execution, const std::optional<SwarmReport>& swarm) {
  PlanTraffic traffic{execution.pushed_sent_bytes, execution.pushed_received_bytes};
  if (swarm) {
    traffic.sent_bytes += swarm->uploaded_bytes;
    for (const PeerReceipt& r : swarm->received) traffic.received_bytes += r.bytes;
  }
  return traffic;
}

PlanRun::PlanRun(std::shared_ptr<const PlanExecution> execution) : execution_(std::move(execution)) {}

const PlanId& PlanRun::id() const { return execution_->id(); }

PlanMode PlanRun::mode() const { return execution_->plan().mode; }

bool PlanRun::IsSource() const { return execution_->self() == 0; }

ExecutionSnapshot PlanRun::Snapshot() const { return execution_->Snapshot(); }

std::optional<SwarmReport> PlanRun::Swarm() const {
  if (!execution_->swarm()) return std::nullopt;
  return execution_->swarm()->Report();
}

uint64_t PlanRun::ReusedBytes() const { return execution_->store().ReusedBytes(); }

std::optional<Digest> PlanRun::PayloadSha256() const {
  const PayloadStore& store = execution_->store();
  if (!store.identity().Streams()) return store.identity().sha256;
  if (store.digest_log() == nullptr) return std::nullopt;
  const std::optional<DigestClosing> closing = store.digest_log()->Closing();
  return closing ? std::optional<Digest>(closing->payload_sha256) : std::nullopt;
}

std::optional<DigestClosing> PlanRun::Closing() const {
  const PayloadStore& store = execution_->store();
  const PayloadIdentity& identity = store.identity();
  if (!identity.Streams()) return DigestClosing{identity.ListDigest(), identity.sha256};
  if (store.digest_log() == nullptr) return std::nullopt;
  return store.digest_log()->Closing();
}

}  // namespace gridcast
