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

const Digest& PlanRun::PayloadSha256() const { return execution_->store().identity().sha256; }

bool PlanRun::PayloadStillWritten() const { return execution_->shared_store()->capabilities().growing != nullptr; }

}  // namespace gridcast
