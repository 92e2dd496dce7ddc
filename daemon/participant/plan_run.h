// PlanRun: a handle on one plan as it runs at this member, for whoever follows it from outside
// the participant: the source's coordinator (Participant::PrepareSource returns one), the
// control tree's and Status's answers, the metrics. It shows the run's progress and traffic;
// the execution's store, lanes and swarm stay behind it. Copyable (copies share the
// execution); thread-safe, as the execution's Snapshot() is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "collectives/plan.h"
#include "common/crypto.h"
#include "common/ids.h"
#include "daemon/executor/plan_execution.h"

namespace gridcast {

// Payload bytes a member sent and received in a plan: down and up its push lanes (`execution`)
// plus, when its swarm's report was taken (`swarm`), to and from its swarm peers.
struct PlanTraffic {
  uint64_t sent_bytes = 0;
  uint64_t received_bytes = 0;
};
PlanTraffic TrafficOf(const ExecutionSnapshot& execution, const std::optional<SwarmReport>& swarm);

class PlanRun {
 public:
  // REQUIRES: `execution` is not null.
  explicit PlanRun(std::shared_ptr<const PlanExecution> execution);

  const PlanId& id() const;
  PlanMode mode() const;
  // Whether this member is the plan's source (member 0).
  bool IsSource() const;
  ExecutionSnapshot Snapshot() const;
  // The swarm's report, none for a plan without a swarm. It asks libtorrent and copies every
  // receipt: take it where it is read.
  std::optional<SwarmReport> Swarm() const;
  // Payload bytes this member took at Prepare from earlier copies instead of receiving them.
  uint64_t ReusedBytes() const;
  // SHA-256 of the whole payload and the digest of its chunk list, as the plan gave them or, where
  // the source hashes as it sends, as its last batch of digests says once it came (none before).
  std::optional<DigestClosing> Closing() const;
  // Its payload SHA-256 alone (Closing() folds a listed plan's whole list).
  std::optional<Digest> PayloadSha256() const;

 private:
  std::shared_ptr<const PlanExecution> execution_;
};

}  // namespace gridcast
