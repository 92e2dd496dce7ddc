// The mode a broadcast gets from its request and what is known of the network, the planner a
// mode may use, and a push plan made hybrid.
#include "collectives/broadcast_mode.h"

#include <gtest/gtest.h>

#include <utility>

#include "collectives/planners/swarm.h"
#include "collectives/registry.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

BroadcastModeInputs Inputs(std::optional<PlanMode> requested, const std::string& algorithm = "auto") {
  BroadcastModeInputs inputs;
  inputs.requested = requested;
  inputs.algorithm = algorithm;
  inputs.network_described = true;
  inputs.payload_bytes = 1 << 20;
  return inputs;
}

// `n` nodes of 100 Mbit on one switch, and options naming them all with n0 the source.
std::pair<NetworkModel, PlanOptions> OneSwitch(int n) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  PlanOptions options;
  for (int i = 0; i < n; ++i) {
    net.nodes.push_back({"n" + std::to_string(i), 0, 100e6, 100e6});
    options.members.push_back(i);
  }
  options.source = 0;
  return {net, options};
}

TEST(BroadcastModeTest, EveryModeHasItsNameAndItsParts) {
  for (const PlanModeRow& row : kPlanModeRows) {
    EXPECT_EQ(PlanModeFromName(PlanModeName(row.mode)), row.mode);
    EXPECT_EQ(&PlanModeRowOf(row.mode), &kPlanModeRows[PlanModeIndex(row.mode)]);
    EXPECT_TRUE(ModeHasLanes(row.mode) || ModeHasSwarm(row.mode)) << row.name;
  }
  EXPECT_TRUE(ModeHasLanes(PlanMode::kPush) && !ModeHasSwarm(PlanMode::kPush));
  EXPECT_TRUE(!ModeHasLanes(PlanMode::kPull) && ModeHasSwarm(PlanMode::kPull));
  EXPECT_TRUE(ModeHasLanes(PlanMode::kHybrid) && ModeHasSwarm(PlanMode::kHybrid));
  EXPECT_EQ(PlanModeFromName("Push"), std::nullopt);
  EXPECT_STREQ(PlanModeName(static_cast<PlanMode>(0)), "unknown");
}

TEST(BroadcastModeTest, TheRequestedModeIsKept) {
  for (PlanMode mode : {PlanMode::kPush, PlanMode::kPull, PlanMode::kHybrid}) {
    for (bool described : {false, true}) {
      BroadcastModeInputs inputs = Inputs(mode);
      inputs.network_described = described;
      Result<PlanMode> chosen = ChooseBroadcastMode(inputs);
      ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
      EXPECT_EQ(*chosen, mode);
    }
  }
}

TEST(BroadcastModeTest, LeftOpenItIsHybridOnlyWhereAutoPlansANetworkNobodyDescribed) {
  BroadcastModeInputs guessed = Inputs(std::nullopt);
  guessed.network_described = false;
  EXPECT_EQ(*ChooseBroadcastMode(guessed), PlanMode::kHybrid);
  EXPECT_EQ(*ChooseBroadcastMode(Inputs(std::nullopt)), PlanMode::kPush);  // described
  BroadcastModeInputs named = guessed;
  named.algorithm = "binomial";
  EXPECT_EQ(*ChooseBroadcastMode(named), PlanMode::kPush);
  BroadcastModeInputs empty = guessed;
  empty.payload_bytes = 0;
  EXPECT_EQ(*ChooseBroadcastMode(empty), PlanMode::kPush);
  BroadcastModeInputs encrypted = guessed;
  encrypted.data_encrypted = true;
  EXPECT_EQ(*ChooseBroadcastMode(encrypted), PlanMode::kPush);
}

TEST(BroadcastModeTest, AnEncryptedDataPlaneRefusesBitTorrentExceptForProbes) {
  for (PlanMode mode : {PlanMode::kPull, PlanMode::kHybrid}) {
    BroadcastModeInputs inputs = Inputs(mode);
    inputs.data_encrypted = true;
    Result<PlanMode> refused = ChooseBroadcastMode(inputs);
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("send with --mode push"), std::string::npos);
    inputs.probe = true;
    EXPECT_EQ(*ChooseBroadcastMode(inputs), mode);
  }
  BroadcastModeInputs push = Inputs(PlanMode::kPush);
  push.data_encrypted = true;
  EXPECT_EQ(*ChooseBroadcastMode(push), PlanMode::kPush);
}

TEST(BroadcastModeTest, EachModeTakesPlannersOfItsKindOnly) {
  Result<PlanMode> push_for_pull = ChooseBroadcastMode(Inputs(PlanMode::kPull, "binomial"));
  EXPECT_EQ(push_for_pull.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(push_for_pull.status().message().find("'binomial' is a push planner"), std::string::npos);
  for (std::optional<PlanMode> mode : {std::optional<PlanMode>{}, std::optional{PlanMode::kPush},
                                       std::optional{PlanMode::kHybrid}}) {
    Result<PlanMode> swarm_for_push = ChooseBroadcastMode(Inputs(mode, "swarm"));
    EXPECT_EQ(swarm_for_push.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(swarm_for_push.status().message().find("use --mode pull"), std::string::npos);
  }
  EXPECT_EQ(*ChooseBroadcastMode(Inputs(PlanMode::kPull, "swarm-free")), PlanMode::kPull);
  // An unknown name is left to MakePlanner, which lists the known ones.
  EXPECT_TRUE(ChooseBroadcastMode(Inputs(PlanMode::kPush, "no-such-planner")).ok());
  EXPECT_EQ(PlannerForMode(PlanMode::kPull, "auto"), "swarm");
  EXPECT_EQ(PlannerForMode(PlanMode::kPush, "auto"), "auto");
  EXPECT_EQ(PlannerForMode(PlanMode::kHybrid, "binary"), "binary");
}

TEST(BroadcastModeTest, AHybridPlanIsThePushPlanWithASwarmOverTheSameMembers) {
  auto [net, options] = OneSwitch(6);
  const uint64_t size = 10 << 20;
  Result<std::unique_ptr<Planner>> made = MakePlanner("binomial");
  ASSERT_TRUE(made.ok());
  const std::unique_ptr<Planner>& planner = *made;
  options.chunk_bytes = planner->DefaultChunkBytes(size);
  Result<Plan> push = planner->MakePlan(net, size, options);
  ASSERT_TRUE(push.ok()) << push.status().ToString();
  Result<Plan> hybrid = WithSwarmRepair(*push, net, size, options);
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().ToString();
  EXPECT_EQ(hybrid->mode, PlanMode::kHybrid);
  EXPECT_EQ(hybrid->lanes.size(), push->lanes.size());
  EXPECT_EQ(hybrid->members, push->members);
  EXPECT_EQ(hybrid->swarm.members.size(), 5u);  // every member but the source
  EXPECT_NE(hybrid->rationale.find("hybrid"), std::string::npos);
  EXPECT_TRUE(ValidatePlanOn(*hybrid, net).ok()) << ValidatePlanOn(*hybrid, net).ToString();
  EXPECT_EQ(WithSwarmRepair(*push, net, 0, options).status().code(), StatusCode::kInvalidArgument);
}

TEST(BroadcastModeTest, AHybridSwarmSeedsACopyPerGroupWherePullWouldSeedOneInAll) {
  // Three sites whose nodes upload as slowly as the source: pull seeds one copy across them,
  // a hybrid's repairs one per site, so a site cut off from the others still gets its chunks.
  NetworkModel net;
  net.switches = {{"core", -1}, {"a", 0, 60e6, 60e6}, {"b", 0, 30e6, 30e6}, {"c", 0, 20e6, 20e6}};
  PlanOptions options;
  for (int i = 0; i < 24; ++i) {
    net.nodes.push_back({"n" + std::to_string(i), 1 + i / 8, 5e6, 10e6});
    options.members.push_back(i);
  }
  options.source = 0;
  const uint64_t size = 64 << 20;
  options.chunk_bytes = 64 << 10;
  Result<Plan> pull = SwarmPlanner().MakePlan(net, size, options);
  ASSERT_TRUE(pull.ok()) << pull.status().ToString();
  EXPECT_NE(pull->rationale.find("one copy"), std::string::npos) << pull->rationale;
  Result<std::unique_ptr<Planner>> made = MakePlanner("multilane");
  ASSERT_TRUE(made.ok());
  Result<Plan> push = (*made)->MakePlan(net, size, options);
  ASSERT_TRUE(push.ok()) << push.status().ToString();
  Result<Plan> hybrid = WithSwarmRepair(*push, net, size, options);
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().ToString();
  EXPECT_EQ(hybrid->rationale.find("one copy"), std::string::npos) << hybrid->rationale;
  // Each site's members split every chunk among themselves: a copy per site.
  for (int site = 1; site <= 3; ++site) {
    std::vector<int> stripes_of(hybrid->NumChunks(), 0);
    for (const SwarmMember& m : hybrid->swarm.members) {
      if (net.nodes[m.member].switch_index != site) continue;
      for (const ChunkRange& r : m.stripe) {
        for (uint64_t c = r.begin; c < r.end; c += r.step) ++stripes_of[c];
      }
    }
    const int site_members = site == 1 ? 7 : 8;  // the source is n0, in site a
    for (uint64_t c = 0; c < stripes_of.size(); ++c) {
      ASSERT_EQ(stripes_of[c], 1) << "site " << site << " chunk " << c << " (" << site_members << " members)";
    }
  }
}

TEST(BroadcastModeTest, TheCheckedPlanIsTheModesAndItsChecksRun) {
  auto [net, options] = OneSwitch(4);
  options.chunk_bytes = 64 << 10;
  Result<std::unique_ptr<Planner>> chain = MakePlanner("chain");
  ASSERT_TRUE(chain.ok());
  Result<Plan> push = MakeCheckedPlan(**chain, PlanMode::kPush, net, 1 << 20, options);
  ASSERT_TRUE(push.ok()) << push.status().ToString();
  EXPECT_EQ(push->mode, PlanMode::kPush);
  EXPECT_TRUE(push->swarm.members.empty());
  Result<Plan> hybrid = MakeCheckedPlan(**chain, PlanMode::kHybrid, net, 1 << 20, options);
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().ToString();
  EXPECT_EQ(hybrid->mode, PlanMode::kHybrid);
  EXPECT_EQ(hybrid->swarm.members.size(), 3u);
  // A swarm's pieces are BitTorrent's: a chunk that is not one fails the check, not the run.
  options.chunk_bytes = 100000;
  EXPECT_FALSE(MakeCheckedPlan(**chain, PlanMode::kHybrid, net, 1 << 20, options).ok());
}

}  // namespace
}  // namespace gridcast
