#include "collectives/planners/swarm.h"

#include <algorithm>
#include <bit>
#include <map>

#include "collectives/bandwidth_groups.h"
#include "collectives/planners/planner_util.h"

namespace gridcast {

uint64_t SwarmPlanner::DefaultChunkBytes(uint64_t payload_bytes) const {
  return ChunkBytesForCount(payload_bytes, 4096, 64 << 10, 16 << 20);
}

Result<Plan> SwarmPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                    const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  if (options.chunk_bytes < (16u << 10) || !std::has_single_bit(options.chunk_bytes)) {
    return Status::InvalidArgument("a pull chunk (BitTorrent piece) must be a power of two of at least 16 KiB, not " +
                                   std::to_string(options.chunk_bytes) + " bytes");
  }
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  plan.mode = PlanMode::kPull;
  plan.swarm.source = 0;
  plan.swarm.free_choice = free_choice_;
  const int p = ranks.size();
  const uint64_t n = plan.NumChunks();
  if (free_choice_) {
    for (int r = 1; r < p; ++r) {
      SwarmMember m{r, {}, {}};
      for (int q = 0; q < p; ++q) {
        if (q != r) m.peers.push_back(q);
      }
      plan.swarm.members.push_back(std::move(m));
    }
    plan.rationale = "free choice: every member peers with every other, no stripes";
    return plan;
  }
  // Receivers by bandwidth group, in rank order.
  const std::vector<int> switch_group = SwitchBandwidthGroups(net);
  std::map<int, std::vector<int>> groups;
  for (int r = 1; r < p; ++r) groups[switch_group[net.nodes[ranks.nodes[r]].switch_index]].push_back(r);
  for (const auto& [group, members] : groups) {
    const int k = static_cast<int>(members.size());
    for (int i = 0; i < k; ++i) {
      SwarmMember m{members[i], {}, {0}};
      if (static_cast<uint64_t>(i) < n) m.stripe.push_back({static_cast<uint64_t>(i), n, static_cast<uint64_t>(k)});
      for (int other : members) {
        if (other != members[i]) m.peers.push_back(other);
      }
      plan.swarm.members.push_back(std::move(m));
    }
  }
  std::sort(plan.swarm.members.begin(), plan.swarm.members.end(),
            [](const SwarmMember& a, const SwarmMember& b) { return a.member < b.member; });
  plan.rationale = std::to_string(groups.size()) +
                   " bandwidth group(s); in each, every member takes its stripe of the chunks"
                   " from the source and the rest from its group";
  return plan;
}

}  // namespace gridcast
