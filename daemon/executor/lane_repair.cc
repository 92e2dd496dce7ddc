#include "daemon/executor/lane_repair.h"

#include <spdlog/spdlog.h>

#include "common/hex.h"
#include "daemon/executor/parent_watch.h"

namespace gridcast {

void LaneRepair::Start(std::shared_ptr<PullSwarm> swarm) {
  swarm_ = std::move(swarm);
  parent_repairs_.assign(context_.schedule.lanes(), false);
  repaired_.assign(context_.schedule.lanes(), false);
}

void LaneRepair::ParentRepairs(int lane) {
  if (active()) parent_repairs_[lane] = true;
}

std::vector<uint64_t> LaneRepair::MissingOf(int lane) const {
  std::vector<uint64_t> missing;
  const LaneSchedule& schedule = context_.schedule;
  for (uint64_t p = 0; p < schedule.LogSize(lane); ++p) {
    if (!context_.store->Has(schedule.LoggedAt(lane, p))) missing.push_back(schedule.LoggedAt(lane, p));
  }
  return missing;
}

void LaneRepair::Tick(std::chrono::steady_clock::time_point now) {
  if (!active()) return;
  const int lanes = static_cast<int>(context_.schedule.lanes());
  // Endgame: once the swarm delivered every chunk it was asked for, the lanes still pushing
  // (slowly: their parents share their upload with the swarm) finish through it too.
  bool repairing = false, swarm_idle = true;
  for (int l = 0; l < lanes; ++l) {
    if (!repaired_[l]) continue;
    repairing = true;
    swarm_idle = swarm_idle && MissingOf(l).empty();
  }
  const bool endgame = repairing && swarm_idle;
  for (int l = 0; l < lanes; ++l) {
    const int parent = context_.schedule.ParentOf(l);
    if (parent < 0 || repaired_[l]) continue;
    const char* why = nullptr;
    if (parent_repairs_[l]) {
      why = "pulls this lane itself";
    } else if (context_.watch.QuietFor(l, now) >= context_.options.repair_stall) {
      // Gone or silent for longer than the source takes to patch the plan around the parent
      // (the member reports it after --parent-silent, and a new parent resets the quiet).
      why = context_.watch.Trouble(l) == RepairReason::kGone ? "is gone" : "is silent";
    } else if (endgame) {
      why = "is slower than the idle swarm";
    }
    if (why == nullptr) continue;
    std::vector<uint64_t> missing = MissingOf(l);
    if (missing.empty()) continue;
    spdlog::warn("plan {} lane {}: parent {} {}; pulling its {} missing chunks from the swarm", ToHex(context_.id), l,
                 context_.names[parent], why, missing.size());
    repaired_[l] = true;
    swarm_->Fetch(missing);
  }
}

}  // namespace gridcast
