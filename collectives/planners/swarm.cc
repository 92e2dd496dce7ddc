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

// How the source's upload is shared between groups where it seeds a copy per group.
struct GroupSeeding {
  double source_share_bps = 0;  // the group's share of the source's upload, payload; 0: no limit
  int import_slots = 0;         // stripes of the group taken from groups that set the bound
  std::vector<int> exporters;   // those groups, where import_slots > 0
};

// Where the source seeds a copy per group, groups whose own bottleneck sets the bound (nancy's
// uplink on two-sites) need their full rate from the source, and the others can take only the
// rest of its upload: left to TCP, flows to a fast group took 76 of the source's 100 mbit on
// two-sites and the slow site finished at 1.45 of the bound. So each group with rate to spare
// gets an equal part of the rest (at least the rate that finishes at the bound) as its source
// share; groups that set the bound get none (no limit). Rates are line rates and a share counts
// payload: TCP over Ethernet carries 1448 payload bytes in a 1514-byte frame, so a share at the
// line rate took the slow site's part of the source's overhead too (two-sites: lyon at 1.00 of
// the bound, nancy at 1.06-1.11).
//
// Where that rest leaves the source's upload nearly full (two-sites: a copy per site at the
// bound's rate is exactly its 100 mbit), TCP has no slack and the groups that set the bound
// got 3% under their rate (1 GiB pull at 1.06-1.08 of the bound). Then each group with rate to
// spare imports a few stripes of its copy from the groups that set the bound, over their idle
// upward uplinks (they take nothing from it: nothing enters them twice), so the source carries
// at most kSourceLoad of its upload.
std::map<int, GroupSeeding> ShareTheSourceUpload(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes,
                                                 const std::map<int, std::vector<int>>& groups) {
  constexpr double kTightSlack = 1.05;  // a group within this of the bound's rate sets the bound
  constexpr double kPayloadPerLineBit = 1448.0 / 1514.0;
  constexpr double kSourceLoad = 0.9;
  // Of the rate of the route between groups, what imports may take (the rest stays for the
  // ACKs of the exporters' own downloads and what else crosses), and of a copy, what one group
  // imports at most.
  constexpr double kExportShare = 0.5;
  constexpr double kMaxImport = 0.5;
  std::map<int, GroupSeeding> seeding;
  const double source_up_bps = net.nodes[ranks.nodes[0]].up_bps;
  const double bound_s = BroadcastBoundSeconds(net, ranks.nodes[0], ranks.nodes, payload_bytes);
  if (groups.size() < 2 || std::isinf(source_up_bps) || bound_s <= 0) return seeding;
  const double bits = static_cast<double>(payload_bytes) * 8;
  const double need_bps = bits / bound_s;
  std::vector<int> loose;
  std::vector<int> exporters;  // groups that set the bound and may export
  double tight_bps = 0;
  for (const auto& [group, members] : groups) {
    std::vector<int> nodes;
    for (int r : members) nodes.push_back(ranks.nodes[r]);
    const BroadcastBound group_bound = ComputeBroadcastBound(net, ranks.nodes[0], nodes, payload_bytes);
    const double group_bps = group_bound.seconds > 0 ? bits / group_bound.seconds : INFINITY;
    if (group_bps <= kTightSlack * need_bps) {
      tight_bps += group_bps;
      // Only a group held by what enters it exports: one held by its members' uploads has
      // none to spare.
      if (group_bound.term == BoundTerm::kUplink || group_bound.term == BoundTerm::kReceiverDownload) {
        exporters.push_back(group);
      }
    } else {
      loose.push_back(group);
    }
  }
  if (tight_bps == 0 || loose.empty()) return seeding;
  const double rest_bps = (source_up_bps - tight_bps) / static_cast<double>(loose.size());
  const double wanted_import = 1 - (kSourceLoad * source_up_bps - tight_bps) / (static_cast<double>(loose.size()) * need_bps);
  for (int group : loose) {
    GroupSeeding& g = seeding[group];
    g.source_share_bps = kPayloadPerLineBit * std::max(need_bps, rest_bps);
    if (wanted_import <= 0) continue;
    const int k = static_cast<int>(groups.at(group).size());
    const int switch_of_group = net.nodes[ranks.nodes[groups.at(group).front()]].switch_index;
    double export_bps = 0;
    for (int exporter : exporters) {
      double route_bps = INFINITY;
      const int from = net.nodes[ranks.nodes[groups.at(exporter).front()]].switch_index;
      for (const UplinkHop& hop : SwitchRoute(net, from, switch_of_group)) route_bps = std::min(route_bps, hop.rate_bps);
      export_bps += kExportShare * route_bps / static_cast<double>(loose.size());
    }
    const double import = std::min({wanted_import, kMaxImport, export_bps / need_bps});
    // import_slots stripes of k + import_slots: the count nearest `import` (two-sites: 2 of 9
    // for 0.2), within the caps; none for a small group whose nearest is none.
    int slots = static_cast<int>(std::lround(import * k / (1 - import)));
    while (slots > 0 && static_cast<double>(slots) / (k + slots) > std::min(kMaxImport, export_bps / need_bps)) --slots;
    if (slots == 0) continue;
    g.import_slots = slots;
    g.exporters = exporters;
    g.source_share_bps = kPayloadPerLineBit * need_bps * k / (k + slots);
  }
  return seeding;
}

// The chunks member i of a group of k imports, where the group's copy is striped k +
// `slots` ways and takes the last `slots` stripes from other groups. Each imported chunk
// enters the group once, through one member, which passes it on: round q's chunk of import
// slot j goes to member (q * slots + j) mod k. Left to every member, each imported chunk
// crossed 4.4 times on two-sites and filled the exporter's upward uplink, where the ACKs of
// its own download queued (1.108 of the bound).
std::vector<ChunkRange> ImportedBy(int i, int k, int slots, uint64_t num_chunks) {
  const uint64_t stride = static_cast<uint64_t>(k + slots);
  std::vector<ChunkRange> ranges;
  for (int q = 0; q < k; ++q) {
    for (int j = 0; j < slots; ++j) {
      const uint64_t first = static_cast<uint64_t>(q) * stride + static_cast<uint64_t>(k + j);
      if ((q * slots + j) % k == i && first < num_chunks) ranges.push_back({first, num_chunks, stride * k});
    }
  }
  return ranges;
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
      SwarmMember m;
      m.member = r;
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
  const std::map<int, GroupSeeding> seeding = seeding_ == SwarmSeeding::kAsTheSourceCan && !one_copy
                                                 ? ShareTheSourceUpload(net, ranks, payload_bytes, groups)
                                                 : std::map<int, GroupSeeding>{};
  std::vector<std::pair<int, int>> imports;  // (importer, exporter) peerings
  int striped = 0;  // receivers given a stripe so far (one_copy: stripes run across the groups)
  for (const auto& [group, members] : groups) {
    const int k = static_cast<int>(members.size());
    const std::vector<int> offsets = PeerOffsets(k);
    const auto seeded = seeding.find(group);
    const GroupSeeding g = seeded == seeding.end() ? GroupSeeding{} : seeded->second;
    for (int i = 0; i < k; ++i) {
      SwarmMember m;
      m.member = members[i];
      m.peers = {0};
      const uint64_t index = one_copy ? striped++ : i;
      const uint64_t stride = one_copy ? p - 1 : k + g.import_slots;
      if (index < n) m.stripe.push_back({index, n, stride});
      for (int peer : PeersInGroup(members, i, offsets)) m.peers.push_back(peer);
      if (one_copy) {
        for (const auto& [other_group, others] : groups) {
          if (other_group == group) continue;
          for (int peer : PeersAcross(others, i, k)) m.peers.push_back(peer);
        }
      }
      const std::vector<ChunkRange> imported = ImportedBy(i, k, g.import_slots, n);
      for (int exporter : g.exporters) {
        for (int peer : PeersAcross(groups.at(exporter), i, k)) {
          m.peers.push_back(peer);
          m.takes_only.push_back({peer, imported});
          imports.emplace_back(members[i], peer);
        }
      }
      m.source_share_bps = g.source_share_bps / k;
      plan.swarm.members.push_back(std::move(m));
    }
  }
  std::sort(plan.swarm.members.begin(), plan.swarm.members.end(),
            [](const SwarmMember& a, const SwarmMember& b) { return a.member < b.member; });
  for (const auto& [importer, exporter] : imports) {
    plan.swarm.members[exporter - 1].takes_only.push_back({importer, {}});  // rank r at r - 1
  }
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
  for (const auto& [group, g] : seeding) {
    const std::string& where = net.switches[net.nodes[ranks.nodes[groups.at(group).front()]].switch_index].name;
    plan.rationale += "; the group under " + where + " takes at most " +
                      std::to_string(static_cast<int>(std::lround(g.source_share_bps / 1e6))) +
                      " mbit of the source's upload";
    if (g.import_slots > 0) {
      plan.rationale += " and " + std::to_string(g.import_slots) + " of " +
                        std::to_string(groups.at(group).size() + g.import_slots) +
                        " stripes from the groups that set the bound";
    }
  }
  if (!seeding.empty()) plan.rationale += ", so those that set the bound get their full rate";
  const bool capped = plan.swarm.source_upload_slots > 0 ||
                      std::any_of(plan.swarm.members.begin(), plan.swarm.members.end(),
                                  [](const SwarmMember& m) { return m.upload_slots > 0; });
  if (capped) plan.rationale += "; on slow uplinks a member uploads to one peer per 512 kbit/s at a time";
  return plan;
}

}  // namespace gridcast
