#include "daemon/executor/lane_repair.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/hex.h"

namespace gridcast {

namespace asio = boost::asio;

std::chrono::milliseconds KeepaliveInterval(const ExecutionOptions& options) {
  return std::clamp(options.repair_stall / 4, std::chrono::milliseconds(50), options.io_timeout / 4);
}

const char* LaneRepair::WhyRepaired(ParentTrouble trouble, bool endgame) {
  switch (trouble) {
    case ParentTrouble::kGone:
      return "is gone";
    case ParentTrouble::kRepairing:
      return "pulls this lane itself";
    case ParentTrouble::kNone:
      return endgame ? "is slower than the idle swarm" : "is silent";
  }
  return "";
}

void LaneRepair::Start(std::shared_ptr<PullSwarm> swarm) {
  swarm_ = std::move(swarm);
  const size_t lanes = context_.schedule.lanes();
  // A lane's first chunk may take a while (connections open level by level as Start travels
  // down the tree): it gets a longer grace before the lane counts as stalled.
  progress_.assign(lanes, std::chrono::steady_clock::now() + 2 * context_.options.repair_stall);
  trouble_.assign(lanes, ParentTrouble::kNone);
  repaired_.assign(lanes, false);
  context_.host.Spawn(Watch());
}

void LaneRepair::Progress(int lane) {
  if (active()) progress_[lane] = std::chrono::steady_clock::now();
}

void LaneRepair::ParentGone(int lane) {
  if (active()) trouble_[lane] = ParentTrouble::kGone;
}

void LaneRepair::ParentRepairs(int lane) {
  if (active() && trouble_[lane] == ParentTrouble::kNone) trouble_[lane] = ParentTrouble::kRepairing;
}

std::vector<uint64_t> LaneRepair::MissingOf(int lane) const {
  std::vector<uint64_t> missing;
  const LaneSchedule& schedule = context_.schedule;
  for (uint64_t p = 0; p < schedule.LogSize(lane); ++p) {
    if (!context_.store->Has(schedule.LoggedAt(lane, p))) missing.push_back(schedule.LoggedAt(lane, p));
  }
  return missing;
}

asio::awaitable<void> LaneRepair::Watch() {
  asio::steady_timer tick(context_.io);
  const auto period = std::max(context_.options.repair_stall / 4, std::chrono::milliseconds(50));
  const int lanes = static_cast<int>(context_.schedule.lanes());
  while (!context_.host.Stopping() && !context_.store->Complete()) {
    tick.expires_after(period);
    boost::system::error_code ec;
    co_await tick.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    const auto now = std::chrono::steady_clock::now();
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
      const ParentTrouble trouble = trouble_[l];
      if (!endgame && trouble == ParentTrouble::kNone && now - progress_[l] < context_.options.repair_stall) continue;
      std::vector<uint64_t> missing = MissingOf(l);
      if (missing.empty()) continue;
      spdlog::warn("plan {} lane {}: parent {} {}; pulling its {} missing chunks from the swarm", ToHex(context_.id), l,
                   context_.plan.members[parent], WhyRepaired(trouble, endgame), missing.size());
      repaired_[l] = true;
      swarm_->Fetch(missing);
    }
  }
}

}  // namespace gridcast
