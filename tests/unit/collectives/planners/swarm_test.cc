#include "collectives/planners/swarm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "collectives/bandwidth_groups.h"
#include "collectives/validate_plan.h"
#include "proto/plan_codec.h"

namespace gridcast {
namespace {

NetworkModel Flat(int p) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  for (int i = 0; i < p; ++i) net.nodes.push_back({"n" + std::to_string(i), 0, 100e6, 100e6});
  return net;
}

// Two sites of `per_site` 100 Mbit nodes behind 400 and 50 Mbit uplinks, source in site a.
NetworkModel TwoSites(int per_site) {
  NetworkModel net;
  net.switches = {{"core", -1}, {"a", 0, 400e6, 400e6}, {"b", 0, 50e6, 50e6}};
  for (int i = 0; i < 2 * per_site; ++i) {
    net.nodes.push_back({"n" + std::to_string(i), i < per_site ? 1 : 2, 100e6, 100e6});
  }
  return net;
}

constexpr uint64_t kPiece = 256 << 10;

Plan MakeSwarm(const NetworkModel& net, uint64_t size, bool free_choice = false) {
  PlanOptions options;
  options.chunk_bytes = kPiece;
  Result<Plan> plan = SwarmPlanner(free_choice).MakePlan(net, size, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return *plan;
}

std::string Site(const NetworkModel& net, const Plan& plan, int member) {
  return net.switches[net.nodes[*net.FindNode(plan.members[member])].switch_index].name;
}

TEST(BandwidthGroups, SitesBehindBottlenecksAreGroups) {
  EXPECT_EQ(SwitchBandwidthGroups(Flat(16)), std::vector<int>({0}));
  // 8 x 100 Mbit under 400 and 50 Mbit uplinks: both bottlenecks, the core is alone.
  EXPECT_EQ(SwitchBandwidthGroups(TwoSites(8)), std::vector<int>({0, 1, 2}));
  // Two racks behind fat uplinks share a group with their site switch.
  NetworkModel racks;
  racks.switches = {{"core", -1}, {"site", 0, 100e6, 100e6}, {"r1", 1}, {"r2", 1}, {"other", 0, 50e6, 50e6}};
  for (int i = 0; i < 8; ++i) racks.nodes.push_back({"n" + std::to_string(i), 2 + i % 3, 100e6, 100e6});
  const std::vector<int> groups = SwitchBandwidthGroups(racks);
  EXPECT_EQ(groups[1], groups[2]);
  EXPECT_EQ(groups[2], groups[3]);
  EXPECT_NE(groups[1], groups[4]);
}

TEST(SwarmPlanner, FlatStripesPartitionThePayloadAcrossReceivers) {
  const NetworkModel net = Flat(16);
  const uint64_t size = 1000 * kPiece + 3;
  const Plan plan = MakeSwarm(net, size);
  ASSERT_TRUE(ValidatePlanOn(plan, net).ok()) << ValidatePlanOn(plan, net).ToString();
  EXPECT_EQ(plan.mode, PlanMode::kPull);
  EXPECT_TRUE(plan.lanes.empty());
  ASSERT_EQ(plan.swarm.members.size(), 15u);
  std::vector<int> stripes_holding(plan.NumChunks(), 0);
  for (const SwarmMember& m : plan.swarm.members) {
    EXPECT_EQ(m.peers.size(), 15u);  // the source and the 14 others
    EXPECT_EQ(std::count(m.peers.begin(), m.peers.end(), 0), 1);
    for (const ChunkRange& r : m.stripe) {
      for (uint64_t c = r.begin; c < r.end; c += r.step) ++stripes_holding[c];
    }
  }
  for (uint64_t c = 0; c < plan.NumChunks(); ++c) ASSERT_EQ(stripes_holding[c], 1) << "chunk " << c;
}

TEST(SwarmPlanner, TwoSitesSendEachSiteItsCopyOnceAndTheFastSiteImportsTwoNinths) {
  // A copy per site at the bound's rate (50mbit, nancy's uplink) fills the source's 100mbit, so
  // lyon (a) takes 2 of 9 stripes from nancy (b) over nancy's idle upward uplink: the source
  // carries 0.89 of its upload. Nancy takes every chunk from the source, once, and nothing from
  // lyon; lyon's stripes hold every other chunk once.
  const NetworkModel net = TwoSites(8);
  const Plan plan = MakeSwarm(net, 333 * kPiece);
  ASSERT_TRUE(ValidatePlanOn(plan, net).ok()) << ValidatePlanOn(plan, net).ToString();
  std::map<std::string, std::vector<int>> holders;  // site -> stripe count per chunk
  std::vector<int> imports(plan.NumChunks(), 0);      // lyon members importing each chunk
  for (const SwarmMember& m : plan.swarm.members) {
    const std::string site = Site(net, plan, m.member);
    std::vector<std::vector<ChunkRange>> imported;  // from each peer across
    int across = 0;
    for (int peer : m.peers) {
      if (peer == 0 || Site(net, plan, peer) == site) continue;
      ++across;
      const auto limit = std::find_if(m.takes_only.begin(), m.takes_only.end(),
                                      [peer](const PeerChunks& l) { return l.peer == peer; });
      ASSERT_NE(limit, m.takes_only.end()) << m.member << " and " << peer;
      if (site == "b") {
        EXPECT_TRUE(limit->chunks.empty()) << m.member;  // nancy takes nothing from lyon
      } else {
        if (!imported.empty()) {
          EXPECT_EQ(limit->chunks, imported.front()) << m.member;  // the same from each
        }
        imported.push_back(limit->chunks);
      }
    }
    if (!imported.empty()) {
      for (const ChunkRange& r : imported.front()) {
        for (uint64_t c = r.begin; c < r.end; c += r.step) ++imports[c];
      }
    }
    if (site == "a") {
      EXPECT_EQ(across, 2) << m.member;
    }
    auto& count = holders[site];
    count.resize(plan.NumChunks());
    for (const ChunkRange& r : m.stripe) {
      for (uint64_t c = r.begin; c < r.end; c += r.step) ++count[c];
    }
  }
  ASSERT_EQ(holders.size(), 2u);
  for (uint64_t c = 0; c < plan.NumChunks(); ++c) {
    ASSERT_EQ(holders["b"][c], 1) << "nancy, chunk " << c;
    ASSERT_EQ(holders["a"][c], c % 9 < 7 ? 1 : 0) << "lyon, chunk " << c;
    ASSERT_EQ(imports[c], c % 9 < 7 ? 0 : 1) << "lyon imports chunk " << c;  // once, through one member
  }
  // The sites stay two groups: nancy takes nothing over the links lyon imports through.
  const std::vector<int> group = plan.swarm.GroupOfEachMember();
  for (size_t i = 0; i < plan.swarm.members.size(); ++i) {
    EXPECT_EQ(group[i], Site(net, plan, plan.swarm.members[i].member) == "a" ? 0 : 1) << i;
  }
}

TEST(SwarmPlanner, TwoSitesGiveTheFastSiteOnlyWhatTheSlowSiteLeavesOfTheSource) {
  // The source (100mbit) seeds nancy's (b's) copy at its uplink's 50mbit, unpaced, and lyon (a)
  // 7 of 9 stripes at the payload of 7/9 of 50mbit (1448 of each 1514 bytes), a seventh each.
  const NetworkModel net = TwoSites(8);
  const Plan plan = MakeSwarm(net, 333 * kPiece);
  double lyon_bps = 0;
  for (const SwarmMember& m : plan.swarm.members) {
    if (Site(net, plan, m.member) == "b") {
      EXPECT_EQ(m.source_share_bps, 0) << m.member;
    } else {
      EXPECT_NEAR(m.source_share_bps, 50e6 * 1448 / 1514 / 9, 1) << m.member;
      lyon_bps += m.source_share_bps;
    }
  }
  EXPECT_NEAR(lyon_bps, 37.19e6, 0.01e6);
  EXPECT_NE(plan.rationale.find("under a takes at most 37 mbit of the source's upload and 2 of 9 stripes"),
            std::string::npos)
      << plan.rationale;
  // One site, or a hybrid's repair swarm: nothing paced.
  PlanOptions options;
  options.chunk_bytes = kPiece;
  for (const Plan& unpaced : {MakeSwarm(Flat(8), 333 * kPiece),
                              *SwarmPlanner(false, SwarmSeeding::kCopyPerGroup).MakePlan(net, 333 * kPiece, options)}) {
    for (const SwarmMember& m : unpaced.swarm.members) EXPECT_EQ(m.source_share_bps, 0) << m.member;
  }
}

TEST(SwarmPlanner, ASourceWithUploadToSpareSeedsEachSiteItsWholeCopy) {
  NetworkModel net = TwoSites(8);
  net.nodes[0].up_bps = 200e6;
  const Plan plan = MakeSwarm(net, 333 * kPiece);
  ASSERT_TRUE(ValidatePlanOn(plan, net).ok());
  std::vector<int> lyon_stripes(plan.NumChunks(), 0);
  for (const SwarmMember& m : plan.swarm.members) {
    EXPECT_TRUE(m.takes_only.empty()) << m.member;
    for (int peer : m.peers) {
      if (peer != 0) {
        EXPECT_EQ(Site(net, plan, peer), Site(net, plan, m.member)) << m.member;
      }
    }
    if (Site(net, plan, m.member) != "a") continue;
    EXPECT_NEAR(m.source_share_bps, 150e6 * 1448 / 1514 / 7, 1) << m.member;
    for (const ChunkRange& r : m.stripe) {
      for (uint64_t c = r.begin; c < r.end; c += r.step) ++lyon_stripes[c];
    }
  }
  for (uint64_t c = 0; c < plan.NumChunks(); ++c) ASSERT_EQ(lyon_stripes[c], 1) << c;
  EXPECT_EQ(plan.rationale.find("stripes from the groups"), std::string::npos) << plan.rationale;
}

TEST(SwarmPlanner, AFastSiteOfOneReceiverImportsNothing) {
  // A fifth of a copy is nearer none than one of two stripes.
  const Plan plan = MakeSwarm(TwoSites(2), 333 * kPiece);
  for (const SwarmMember& m : plan.swarm.members) EXPECT_TRUE(m.takes_only.empty()) << m.member;
  EXPECT_EQ(plan.swarm.members[0].stripe, std::vector<ChunkRange>({{0, plan.NumChunks(), 1}}));
}

TEST(SwarmPlanner, ASourceThatCannotSeedEveryGroupSeedsOneCopyAcrossThem) {
  // Three sites of 8 nodes uploading 5mbit, as fast as the source: a copy per site would take
  // the source three times the bound (upload-three-sites-96's pulls did not finish). So every
  // chunk is in one stripe in all, and each member peers into every other site to trade.
  NetworkModel net;
  net.switches = {{"core", -1}, {"a", 0, 60e6, 60e6}, {"b", 0, 30e6, 30e6}, {"c", 0, 20e6, 20e6}};
  for (int i = 0; i < 24; ++i) net.nodes.push_back({"n" + std::to_string(i), 1 + i / 8, 5e6, 10e6});
  const Plan plan = MakeSwarm(net, 333 * kPiece);
  ASSERT_TRUE(ValidatePlanOn(plan, net).ok());
  EXPECT_NE(plan.rationale.find("one copy"), std::string::npos) << plan.rationale;
  std::vector<int> stripes_of(plan.NumChunks(), 0);
  for (const SwarmMember& m : plan.swarm.members) {
    for (const ChunkRange& r : m.stripe) {
      for (uint64_t c = r.begin; c < r.end; c += r.step) ++stripes_of[c];
    }
    std::set<std::string> sites;
    for (int peer : m.peers) {
      if (peer != 0) sites.insert(Site(net, plan, peer));
    }
    EXPECT_EQ(sites.size(), 3u) << plan.members[m.member];
  }
  for (uint64_t c = 0; c < stripes_of.size(); ++c) ASSERT_EQ(stripes_of[c], 1) << "chunk " << c;
  // Both ends list every peering: a member names each peer that connects to it.
  std::set<std::pair<int, int>> links;
  for (const SwarmMember& m : plan.swarm.members) {
    for (int peer : m.peers) links.insert({m.member, peer});
  }
  for (const auto& [a, b] : links) {
    if (b != 0) {
      EXPECT_TRUE(links.count({b, a})) << plan.members[b] << " does not list " << plan.members[a];
    }
  }
  // Where the source uploads as fast as the sites' uplinks take copies, a copy per site stays.
  for (Node& node : net.nodes) node.up_bps = node.down_bps = 100e6;
  net.nodes[0].up_bps = 1e9;
  EXPECT_EQ(MakeSwarm(net, 333 * kPiece).rationale.find("one copy"), std::string::npos);
}

// Groups of more than 17 are not full meshes: each member peers with the source and about 16 others,
// both ways, every member reaches every other in few hops, and the group (what the source's
// dealer shares stripes over) is still the whole group.
TEST(SwarmPlanner, LargeGroupsPeerWithSixteenEachAndStayOneGroup) {
  for (int p : {19, 64, 128, 257, 1000}) {
    const Plan plan = MakeSwarm(Flat(p), 3000 * kPiece);
    ASSERT_TRUE(ValidatePlan(plan).ok()) << p << ": " << ValidatePlan(plan).ToString();
    std::map<int, std::set<int>> peers;
    for (const SwarmMember& m : plan.swarm.members) {
      EXPECT_EQ(m.peers.front(), 0) << p;  // the source first
      const std::set<int> others(m.peers.begin() + 1, m.peers.end());
      EXPECT_EQ(others.size(), m.peers.size() - 1) << p << ": a peer listed twice";
      // 16, one more when the group's size is even (the offset k/2 is one peer, not two), and
      // two per power of two below k in groups of more than 256.
      const size_t k = static_cast<size_t>(p - 1);
      EXPECT_GE(others.size(), 16u) << p << " member " << m.member;
      EXPECT_LE(others.size(), std::max<size_t>(17, 2 * static_cast<size_t>(std::ceil(std::log2(k)))))
          << p << " member " << m.member;
      EXPECT_EQ(others.count(m.member), 0u);
      peers[m.member] = others;
    }
    for (const auto& [member, others] : peers) {
      for (int q : others) EXPECT_EQ(peers[q].count(member), 1u) << p << ": " << member << " -> " << q << " one way";
    }
    // Hops from member 1 to every other, through peers only (not the source).
    std::map<int, int> hops = {{1, 0}};
    std::vector<int> frontier = {1};
    while (!frontier.empty()) {
      std::vector<int> next;
      for (int m : frontier) {
        for (int q : peers[m]) {
          if (hops.emplace(q, hops[m] + 1).second) next.push_back(q);
        }
      }
      frontier = next;
    }
    ASSERT_EQ(hops.size(), static_cast<size_t>(p - 1)) << p;
    int farthest = 0;
    for (const auto& [m, h] : hops) farthest = std::max(farthest, h);
    EXPECT_LE(farthest, static_cast<int>(std::ceil(std::log2(p)))) << p;
    const std::vector<int> group = plan.swarm.GroupOfEachMember();
    EXPECT_EQ(std::set<int>(group.begin(), group.end()), std::set<int>{0}) << p;
  }
}

NetworkModel FlatAt(int p, double bps) {
  NetworkModel net = Flat(p);
  for (Node& node : net.nodes) node.up_bps = node.down_bps = bps;
  return net;
}

TEST(SwarmPlanner, SlowUplinksUploadToOnePeerPerHalfMegabit) {
  // 128 members at 2.5mbit: 4 peers at a time (measured best: docs/scale.md), the source too.
  const Plan slow = MakeSwarm(FlatAt(128, 2.5e6), 3000 * kPiece);
  EXPECT_EQ(slow.swarm.source_upload_slots, 4);
  for (const SwarmMember& m : slow.swarm.members) EXPECT_EQ(m.upload_slots, 4) << m.member;
  EXPECT_NE(slow.rationale.find("512 kbit/s"), std::string::npos) << slow.rationale;
  // Never fewer than two, however slow.
  EXPECT_EQ(MakeSwarm(FlatAt(64, 0.3e6), 3000 * kPiece).swarm.members[0].upload_slots, 2);
  // Enough uplink for every peer: no cap (flat16 at 100mbit, unshaped).
  for (const NetworkModel& net : {Flat(16), FlatAt(8, kUnshaped)}) {
    const Plan plan = MakeSwarm(net, 3000 * kPiece);
    EXPECT_EQ(plan.swarm.source_upload_slots, 0) << net.nodes.size();
    for (const SwarmMember& m : plan.swarm.members) EXPECT_EQ(m.upload_slots, 0) << net.nodes.size();
    EXPECT_EQ(plan.rationale.find("512 kbit/s"), std::string::npos) << plan.rationale;
  }
  // 64 at 10mbit: a member's 19 slots cover its 17 peers; the source's 63 they do not.
  const Plan at10 = MakeSwarm(FlatAt(64, 10e6), 3000 * kPiece);
  EXPECT_EQ(at10.swarm.source_upload_slots, 19);
  for (const SwarmMember& m : at10.swarm.members) EXPECT_EQ(m.upload_slots, 0) << m.member;
  // The source's cap counts all its peers: at 5mbit 9 slots are fewer than its 63 but not
  // fewer than a member's 16 or 17.
  const Plan at5 = MakeSwarm(FlatAt(64, 5e6), 3000 * kPiece);
  EXPECT_EQ(at5.swarm.source_upload_slots, 9);
  EXPECT_EQ(at5.swarm.members[0].upload_slots, 9);
}

TEST(SwarmPlanner, GroupsAreWhatPeersConnectWithoutTheSource) {
  const Plan plan = MakeSwarm(TwoSites(8), 333 * kPiece);
  const std::vector<int> group = plan.swarm.GroupOfEachMember();
  ASSERT_EQ(group.size(), plan.swarm.members.size());
  for (size_t i = 0; i < group.size(); ++i) {
    for (size_t j = 0; j < group.size(); ++j) {
      const bool same_site = Site(TwoSites(8), plan, plan.swarm.members[i].member) ==
                             Site(TwoSites(8), plan, plan.swarm.members[j].member);
      EXPECT_EQ(group[i] == group[j], same_site) << i << " " << j;
    }
  }
}

TEST(SwarmPlanner, FreeChoiceHasNoStripesAndFullPeering) {
  const NetworkModel net = TwoSites(3);
  const Plan plan = MakeSwarm(net, 10 * kPiece, /*free_choice=*/true);
  ASSERT_TRUE(ValidatePlanOn(plan, net).ok());
  EXPECT_TRUE(plan.swarm.free_choice);
  for (const SwarmMember& m : plan.swarm.members) {
    EXPECT_TRUE(m.stripe.empty());
    EXPECT_EQ(m.peers.size(), 5u);
  }
}

TEST(SwarmPlanner, EdgeSizesAndMembers) {
  for (int p : {1, 2, 3, 17}) {
    for (uint64_t size : {uint64_t{0}, uint64_t{1}, kPiece, 5 * kPiece + 1}) {
      const Plan plan = MakeSwarm(Flat(p), size);
      EXPECT_TRUE(ValidatePlan(plan).ok()) << p << " " << size << ": " << ValidatePlan(plan).ToString();
    }
  }
}

TEST(SwarmPlanner, RefusesPiecesBitTorrentCannotCarry) {
  PlanOptions options;
  for (uint64_t bad : {uint64_t{8} << 10, uint64_t{3} << 20, uint64_t{0}}) {
    options.chunk_bytes = bad;
    EXPECT_EQ(SwarmPlanner().MakePlan(Flat(4), 1 << 20, options).status().code(),
              StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SwarmPlanner, DefaultPieceSize) {
  EXPECT_EQ(SwarmPlanner().DefaultChunkBytes(0), 64u << 10);
  EXPECT_EQ(SwarmPlanner().DefaultChunkBytes(256ull << 20), 64u << 10);
  EXPECT_EQ(SwarmPlanner().DefaultChunkBytes((256ull << 20) + 1), 128u << 10);
  EXPECT_EQ(SwarmPlanner().DefaultChunkBytes(4ull << 30), 1u << 20);
  EXPECT_EQ(SwarmPlanner().DefaultChunkBytes(1ull << 40), 16u << 20);
}

TEST(SwarmValidation, RefusesBrokenSwarms) {
  const NetworkModel net = Flat(4);
  const Plan good = MakeSwarm(net, 10 * kPiece);
  auto refused = [](Plan plan, const std::string& needle) {
    Status s = ValidatePlan(plan);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << needle;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  };
  Plan p = good;
  p.swarm.members.pop_back();
  refused(p, "is not in the swarm");
  p = good;
  p.swarm.members.push_back(p.swarm.members[0]);
  refused(p, "listed twice");
  p = good;
  p.swarm.members[0].peers.push_back(p.swarm.members[0].member);
  refused(p, "itself");
  p = good;
  p.swarm.members[1].peers.push_back(99);
  refused(p, "not a member index");
  p = good;
  p.swarm.members[1].stripe.push_back({0, 999, 1});
  refused(p, "chunk range ends");
  p = good;
  for (SwarmMember& m : p.swarm.members) m.peers.clear();
  refused(p, "no chain of peers");
  p = good;
  p.lanes.push_back(Lane{});
  refused(p, "no push lanes");
  p = good;
  p.swarm.source = 7;
  refused(p, "swarm source");
  p = good;
  p.swarm.members[0].upload_slots = -1;
  refused(p, "negative number of upload slots");
  p = good;
  p.swarm.source_upload_slots = -1;
  refused(p, "negative number of upload slots");
  p = good;
  p.swarm.members[0].source_share_bps = -1;
  refused(p, "source share that is not a rate");
  p.swarm.members[0].source_share_bps = std::nan("");
  refused(p, "source share that is not a rate");
  p = good;
  p.swarm.members[0].takes_only = {{p.swarm.members[0].member, {}}};
  refused(p, "which is not one of its peers");
  p = good;
  p.swarm.members[0].takes_only = {{p.swarm.members[0].peers[1], {}}, {p.swarm.members[0].peers[1], {}}};
  refused(p, "twice");
  p = good;
  p.swarm.members[0].takes_only = {{p.swarm.members[0].peers[1], {{0, 999, 1}}}};
  refused(p, "chunk range ends");
  p = good;
  p.swarm.members[0].takes_only = {{0, {}}};
  refused(p, "limits what it takes from the source");
  p = good;
  p.swarm.members[0].takes_only = {{2, {}}};  // member 1 limits member 2, which does not limit it
  refused(p, "does not limit it back");
  // A member that takes nothing from the source nor from its only peer has no way to a chunk.
  p = good;
  for (SwarmMember& m : p.swarm.members) {
    m.peers = m.member == 1 ? std::vector<int>{2} : std::vector<int>{0};
    m.takes_only.clear();
  }
  ASSERT_TRUE(ValidatePlan(p).ok()) << ValidatePlan(p).ToString();
  p.swarm.members[1].peers = {0, 1};
  p.swarm.members[1].takes_only = {{1, {}}};           // member 2 takes nothing from member 1
  p.swarm.members[0].takes_only = {{2, {{0, 10, 1}}}};  // member 1 some chunks: still a way
  ASSERT_TRUE(ValidatePlan(p).ok()) << ValidatePlan(p).ToString();
  p.swarm.members[0].takes_only = {{2, {}}};
  refused(p, "no chain of peers to the source");
}

TEST(SwarmValidation, SurvivesTheWireFormat) {
  const NetworkModel net = TwoSites(4);
  Plan plan = MakeSwarm(net, 50 * kPiece);
  plan.swarm.source_upload_slots = 3;
  plan.swarm.members[1].upload_slots = 2;
  plan.swarm.members[1].source_share_bps = 12.5e6;
  v1::Plan proto;
  PlanToProto(plan, &proto);
  Result<Plan> back = PlanFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->swarm.members.size(), plan.swarm.members.size());
  for (size_t i = 0; i < plan.swarm.members.size(); ++i) {
    EXPECT_EQ(back->swarm.members[i].peers, plan.swarm.members[i].peers);
    EXPECT_EQ(back->swarm.members[i].stripe.size(), plan.swarm.members[i].stripe.size());
    EXPECT_EQ(back->swarm.members[i].upload_slots, plan.swarm.members[i].upload_slots);
    EXPECT_EQ(back->swarm.members[i].source_share_bps, plan.swarm.members[i].source_share_bps);
    EXPECT_EQ(back->swarm.members[i].takes_only, plan.swarm.members[i].takes_only);
  }
  EXPECT_TRUE(std::any_of(plan.swarm.members.begin(), plan.swarm.members.end(), [](const SwarmMember& m) {
    return std::any_of(m.takes_only.begin(), m.takes_only.end(), [](const PeerChunks& l) { return !l.chunks.empty(); });
  }));
  EXPECT_EQ(back->swarm.source_upload_slots, 3);
  // More slots than members means one per member.
  proto.mutable_swarm()->set_source_upload_slots(1u << 31);
  EXPECT_EQ(PlanFromProto(proto)->swarm.source_upload_slots, static_cast<int>(plan.members.size()));
  proto.mutable_swarm()->mutable_members(0)->add_peers(1000);
  EXPECT_EQ(PlanFromProto(proto).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
