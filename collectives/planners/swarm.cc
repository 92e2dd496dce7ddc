#include "collectives/planners/swarm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>

#include "collectives/bandwidth_groups.h"
#include "collectives/bound.h"
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
// Where groups trade chunks across (SourceSeedsOneCopy), the peers a member has in each other
// group: a group imports what the source striped elsewhere through about
// group size x this many connections.
constexpr int kPeersInEachOtherGroup = 2;
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

// Whether the source must seed one copy in all instead of one per group: when sending a copy
// to each of `num_groups` groups through its upload would take longer than the bound by more
// than kSourceCopiesSlack (upload-three-sites-96: three copies at 5mbit, 322 s against a bound
// of 114 s; the pulls there did not finish in 187 s). Groups then trade chunks across.
bool SourceSeedsOneCopy(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes, size_t num_groups) {
  constexpr double kSourceCopiesSlack = 1.05;
  if (num_groups < 2) return false;
  const double source_up_bps = net.nodes[ranks.nodes[0]].up_bps;
  const double per_group_s = static_cast<double>(num_groups) * static_cast<double>(payload_bytes) * 8 / source_up_bps;
  const double bound_s = BroadcastBoundSeconds(net, ranks.nodes[0], ranks.nodes, payload_bytes);
  return per_group_s > kSourceCopiesSlack * bound_s;
}

// Member i of a group of `group_size` peers, when groups trade across, with
// kPeersInEachOtherGroup members of group `others`, spread over it.
std::vector<int> PeersAcross(const std::vector<int>& others, int i, int group_size) {
  const int k = static_cast<int>(others.size());
  std::vector<int> peers;
  for (int j = 0; j < kPeersInEachOtherGroup && j < k; ++j) {
    const int other = others[(static_cast<int64_t>(i) * k / group_size + j * k / kPeersInEachOtherGroup) % k];
    if (std::find(peers.begin(), peers.end(), other) == peers.end()) peers.push_back(other);
  }
  return peers;
}

// Where the source seeds a copy per group, groups whose own bottleneck sets the bound (nancy's
// uplink on two-sites) need their full rate from the source, and the others can take only the
// rest of its upload: left to TCP, flows to a fast group took 76 of the source's 100 mbit on
// two-sites and the slow site finished at 1.45 of the bound. So each member of a group with
// rate to spare gets an equal part of the rest (at least the rate that finishes at the bound)
// as its source share; members of the groups that set the bound get none (no limit). Rates
// are line rates and a share counts payload: TCP over Ethernet carries 1448 payload bytes in a
// 1514-byte frame, so a share at the line rate took the slow site's part of the source's
// overhead too (two-sites: lyon at 1.00 of the bound, nancy at 1.06-1.11).
void ShareTheSourceUpload(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes,
                          const std::map<int, std::vector<int>>& groups, Plan* plan) {
  constexpr double kTightSlack = 1.05;  // a group within this of the bound's rate sets the bound
  constexpr double kPayloadPerLineBit = 1448.0 / 1514.0;
  const double source_up_bps = net.nodes[ranks.nodes[0]].up_bps;
  const double bound_s = BroadcastBoundSeconds(net, ranks.nodes[0], ranks.nodes, payload_bytes);
  if (groups.size() < 2 || std::isinf(source_up_bps) || bound_s <= 0) return;
  const double bits = static_cast<double>(payload_bytes) * 8;
  const double need_bps = bits / bound_s;
  std::vector<const std::vector<int>*> loose;
  double tight_bps = 0;
  for (const auto& [group, members] : groups) {
    std::vector<int> nodes;
    for (int r : members) nodes.push_back(ranks.nodes[r]);
    const double group_bound_s = BroadcastBoundSeconds(net, ranks.nodes[0], nodes, payload_bytes);
    const double group_bps = group_bound_s > 0 ? bits / group_bound_s : INFINITY;
    if (group_bps <= kTightSlack * need_bps) {
      tight_bps += group_bps;
    } else {
      loose.push_back(&members);
    }
  }
  if (tight_bps == 0 || loose.empty()) return;
  const double loose_bps =
      kPayloadPerLineBit * std::max(need_bps, (source_up_bps - tight_bps) / static_cast<double>(loose.size()));
  for (const std::vector<int>* members : loose) {
    for (int r : *members) plan->swarm.members[r - 1].source_share_bps = loose_bps / static_cast<double>(members->size());
  }
  plan->rationale += "; the source gives each group that does not set the bound at most " +
                     std::to_string(static_cast<int>(std::lround(loose_bps / 1e6))) +
                     " mbit, so those that do get their full rate";
}

}  // namespace

uint64_t SwarmPlanner::DefaultChunkBytes(uint64_t payload_bytes) const {
  return std::max(ChunkBytesForCount(payload_bytes, 4096, 64 << 10, 16 << 20),
                  SmallestChunkBytes(payload_bytes, /*swarm=*/true));
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
  const bool one_copy =
      seeding_ == SwarmSeeding::kAsTheSourceCan && SourceSeedsOneCopy(net, ranks, payload_bytes, groups.size());
  int striped = 0;  // receivers given a stripe so far (one_copy: stripes run across the groups)
  for (const auto& [group, members] : groups) {
    const int k = static_cast<int>(members.size());
    const std::vector<int> offsets = PeerOffsets(k);
    for (int i = 0; i < k; ++i) {
      SwarmMember m{members[i], {}, {0}};
      const uint64_t index = one_copy ? striped++ : i;
      const uint64_t stride = one_copy ? p - 1 : k;
      if (index < n) m.stripe.push_back({index, n, stride});
      for (int peer : PeersInGroup(members, i, offsets)) m.peers.push_back(peer);
      if (one_copy) {
        for (const auto& [other_group, others] : groups) {
          if (other_group == group) continue;
          for (int peer : PeersAcross(others, i, k)) m.peers.push_back(peer);
        }
      }
      plan.swarm.members.push_back(std::move(m));
    }
  }
  std::sort(plan.swarm.members.begin(), plan.swarm.members.end(),
            [](const SwarmMember& a, const SwarmMember& b) { return a.member < b.member; });
  // Peering is both ways (a member knows by name every peer that connects to it): the peers
  // across groups are picked from one side, so each also lists the other.
  for (size_t e = 0; e < plan.swarm.members.size(); ++e) {
    for (int peer : std::vector<int>(plan.swarm.members[e].peers)) {
      if (peer == 0) continue;
      std::vector<int>& back = plan.swarm.members[peer - 1].peers;  // sorted by member: rank r at r - 1
      if (std::find(back.begin(), back.end(), plan.swarm.members[e].member) == back.end()) {
        back.push_back(plan.swarm.members[e].member);
      }
    }
  }
  for (SwarmMember& m : plan.swarm.members) {
    m.upload_slots = UploadSlots(net.nodes[ranks.nodes[m.member]].up_bps, m.peers.size());
  }
  plan.swarm.source_upload_slots = UploadSlots(net.nodes[ranks.nodes[0]].up_bps, p - 1);
  plan.rationale = std::to_string(groups.size()) +
                   " bandwidth group(s); in each, every member takes its stripe of the chunks"
                   " from the source and the rest from its group (in groups of more than " +
                   std::to_string(kFullMeshGroup) + ", through " + std::to_string(kPeersInLargeGroups) +
                   " peers each)";
  if (one_copy) {
    plan.rationale += "; the source's upload carries one copy, not one per group: stripes run across the "
                      "groups, and each member also peers with " +
                      std::to_string(kPeersInEachOtherGroup) + " in every other group";
  }
  if (seeding_ == SwarmSeeding::kAsTheSourceCan && !one_copy) {
    ShareTheSourceUpload(net, ranks, payload_bytes, groups, &plan);
  }
  const bool capped = plan.swarm.source_upload_slots > 0 ||
                      std::any_of(plan.swarm.members.begin(), plan.swarm.members.end(),
                                  [](const SwarmMember& m) { return m.upload_slots > 0; });
  if (capped) plan.rationale += "; on slow uplinks a member uploads to one peer per 512 kbit/s at a time";
  return plan;
}

}  // namespace gridcast
