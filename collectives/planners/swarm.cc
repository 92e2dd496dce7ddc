#include "collectives/planners/swarm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>

#include "collectives/bandwidth_groups.h"
#include "collectives/planners/planner_util.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

// Groups up to this size are full meshes: every member peers with every other (on flat16 and
// two-sites that is what was measured best). In larger groups a member peers with about
// kPeersInLargeGroups others (more past 256 members: see PeerOffsets). A full mesh of 127
// members is 16,002 connections, each carrying a 127th of its ends' bandwidth in 16 KiB
// blocks (docs/scale.md, "Push and pull at 64 and 128 members").
constexpr int kFullMeshGroup = 17;
constexpr int kPeersInLargeGroups = 16;

// A member uploads to at most one peer per kMinUploadFlowBps of its uplink. Each BitTorrent
// connection carries its share of the uplink a few segments at a time; below about half a
// megabit a dropped segment is a retransmission timeout instead of a fast retransmit, and
// every peer waits. Measured on 128 members at 2.5mbit (16 peers each): uploading to every
// interested peer 1.66-1.75 of the bound, to 4 at a time 1.43-1.48, to 2 1.72
// (docs/scale.md, "Pull at 128: upload slots"). Fast uplinks keep every peer (0: no cap).
constexpr double kMinUploadFlowBps = 512e3;
constexpr int kMinUploadSlots = 2;

int UploadSlots(double up_bps, size_t peers) {
  const double slots = std::max<double>(kMinUploadSlots, std::floor(up_bps / kMinUploadFlowBps));
  return slots >= static_cast<double>(peers) ? 0 : static_cast<int>(slots);
}

// Member i of a group of k peers with i + d and i - d (mod k) for each offset d: the powers of
// two below k (any member is at most about log2 k hops from any other, so a piece spreads in
// as many rounds), then the smallest other offsets until the member has at least
// kPeersInLargeGroups peers.
std::vector<int> PeerOffsets(int k) {
  std::vector<int> offsets;
  std::set<int> reached;  // the distances d and k - d the offsets so far cover: one peer each
  auto add = [&](int d) {
    offsets.push_back(d);
    reached.insert({d, k - d});
  };
  for (int d = 1; d < k; d *= 2) add(d);
  for (int d = 3; d < k && static_cast<int>(reached.size()) < kPeersInLargeGroups; ++d) {
    if (reached.count(d) == 0) add(d);
  }
  return offsets;
}

// The other members of `group` that group[i] peers with.
std::vector<int> PeersInGroup(const std::vector<int>& group, int i, const std::vector<int>& offsets) {
  const int k = static_cast<int>(group.size());
  std::vector<int> peers;
  if (k <= kFullMeshGroup) {
    for (int other : group) {
      if (other != group[i]) peers.push_back(other);
    }
    return peers;
  }
  for (int d : offsets) {
    for (int j : {(i + d) % k, (i - d + k) % k}) {
      if (j != i && std::find(peers.begin(), peers.end(), group[j]) == peers.end()) peers.push_back(group[j]);
    }
  }
  return peers;
}

}  // namespace

uint64_t SwarmPlanner::DefaultChunkBytes(uint64_t payload_bytes) const {
  return ChunkBytesForCount(payload_bytes, 4096, 64 << 10, 16 << 20);
}

Result<Plan> SwarmPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                    const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  GRIDCAST_RETURN_IF_ERROR(CheckPieceBytes(options.chunk_bytes));
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
    const std::vector<int> offsets = PeerOffsets(k);
    for (int i = 0; i < k; ++i) {
      SwarmMember m{members[i], {}, {0}};
      if (static_cast<uint64_t>(i) < n) m.stripe.push_back({static_cast<uint64_t>(i), n, static_cast<uint64_t>(k)});
      for (int peer : PeersInGroup(members, i, offsets)) m.peers.push_back(peer);
      m.upload_slots = UploadSlots(net.nodes[ranks.nodes[members[i]]].up_bps, m.peers.size());
      plan.swarm.members.push_back(std::move(m));
    }
  }
  plan.swarm.source_upload_slots = UploadSlots(net.nodes[ranks.nodes[0]].up_bps, p - 1);
  std::sort(plan.swarm.members.begin(), plan.swarm.members.end(),
            [](const SwarmMember& a, const SwarmMember& b) { return a.member < b.member; });
  plan.rationale = std::to_string(groups.size()) +
                   " bandwidth group(s); in each, every member takes its stripe of the chunks"
                   " from the source and the rest from its group (in groups of more than " +
                   std::to_string(kFullMeshGroup) + ", through " + std::to_string(kPeersInLargeGroups) +
                   " peers each)";
  const bool capped = plan.swarm.source_upload_slots > 0 ||
                      std::any_of(plan.swarm.members.begin(), plan.swarm.members.end(),
                                  [](const SwarmMember& m) { return m.upload_slots > 0; });
  if (capped) plan.rationale += "; on slow uplinks a member uploads to one peer per 512 kbit/s at a time";
  return plan;
}

}  // namespace gridcast
