#include "collectives/validate_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/splitmix64.h"

namespace gridcast {
namespace {

// Three members, two lanes (even and odd chunks), both rooted at member 0.
Plan GoodPlan() {
  Plan plan;
  plan.members = {"a", "b", "c"};
  plan.payload_bytes = 10;
  plan.chunk_bytes = 3;  // chunks 0..3, the last one 1 byte
  Lane even;
  even.chunks = {{0, 4, 2}};
  even.fanouts = {{0, {1}, {}}, {1, {2}, {}}};
  Lane odd;
  odd.chunks = {{1, 4, 2}};
  odd.fanouts = {{0, {2, 1}, {2, 1}}};
  plan.lanes = {even, odd};
  return plan;
}

void ExpectInvalid(const Plan& plan, const std::string& fragment) {
  Status status = ValidatePlan(plan);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << fragment;
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(ValidatePlan, AcceptsAGoodPlan) {
  Plan plan = GoodPlan();
  EXPECT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan).ToString();
  EXPECT_EQ(plan.NumChunks(), 4u);
  EXPECT_EQ(plan.ChunkSize(3), 1u);
  EXPECT_EQ(plan.LaneBytes(0), 6u);  // chunks 0 and 2
  EXPECT_EQ(plan.LaneBytes(1), 4u);  // chunk 1 (3 bytes) and chunk 3 (1 byte)
  EXPECT_EQ(plan.lanes[0].ParentOf(2), 1);
  EXPECT_EQ(plan.lanes[0].ParentOf(0), -1);
  EXPECT_EQ(plan.lanes[1].StreamsOn(plan.lanes[1].fanouts[0], 0), 2);
}

TEST(ValidatePlan, RejectsBrokenMembership) {
  Plan plan = GoodPlan();
  plan.members = {};
  ExpectInvalid(plan, "no members");
  plan = GoodPlan();
  plan.members[2] = "a";
  ExpectInvalid(plan, "listed twice");
  plan = GoodPlan();
  plan.members[1] = "";
  ExpectInvalid(plan, "without a name");
}

// A member given part of a plan (a slice: others unnamed) checks its own part.
TEST(ValidatePlanPart, ChecksWhatTheMemberDealsWith) {
  Plan plan = GoodPlan();
  plan.members.push_back("d");
  plan.lanes[0].fanouts.push_back({2, {3}, {}});
  plan.lanes[1].fanouts[0].children.push_back(3);
  plan.lanes[1].fanouts[0].streams.push_back(1);
  ASSERT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan).ToString();
  for (int m = 0; m < 4; ++m) EXPECT_TRUE(ValidatePlanPart(plan, m).ok()) << m;
  plan.members[3] = "";  // member 1 does not deal with d; member 2 sends to it
  EXPECT_FALSE(ValidatePlan(plan).ok());
  EXPECT_TRUE(ValidatePlanPart(plan, 1).ok()) << ValidatePlanPart(plan, 1).ToString();
  EXPECT_NE(ValidatePlanPart(plan, 2).message().find("a child (member 3) is not named"), std::string::npos)
      << ValidatePlanPart(plan, 2).ToString();
  EXPECT_NE(ValidatePlanPart(plan, 3).message().find("this member (member 3) is not named"), std::string::npos);
  EXPECT_NE(ValidatePlanPart(plan, 4).message().find("not in a plan of 4 members"), std::string::npos);
  // What it holds of other members' parts is still checked.
  Plan twice = plan;
  twice.lanes[1].fanouts[0].children.push_back(2);
  twice.lanes[1].fanouts[0].streams.push_back(1);
  EXPECT_NE(ValidatePlanPart(twice, 1).message().find("has two parents"), std::string::npos)
      << ValidatePlanPart(twice, 1).ToString();
  Plan orphan = plan;
  orphan.lanes[0].fanouts[0].children.clear();  // 1 loses its parent in lane 0
  EXPECT_NE(ValidatePlanPart(orphan, 1).message().find("lane 0: member 'b' has no parent"), std::string::npos)
      << ValidatePlanPart(orphan, 1).ToString();
  Plan uncovered = plan;
  uncovered.lanes[1].chunks = {{1, 3, 2}};  // chunk 3 in no lane
  EXPECT_NE(ValidatePlanPart(uncovered, 1).message().find("chunk 3 is in no lane"), std::string::npos);
}

TEST(ValidatePlan, RejectsBrokenTrees) {
  Plan plan = GoodPlan();
  plan.lanes[0].fanouts[1].children = {7};
  ExpectInvalid(plan, "child 7 is not a member index");
  plan = GoodPlan();
  plan.lanes[0].fanouts[0].parent = -1;
  ExpectInvalid(plan, "parent -1 is not a member index");
  plan = GoodPlan();
  plan.lanes[1].fanouts[0].children = {2, 2};
  plan.lanes[1].fanouts[0].streams = {};
  ExpectInvalid(plan, "has two parents");
  plan = GoodPlan();
  plan.lanes[0].fanouts[1].children = {2, 0};
  ExpectInvalid(plan, "source 'a' is given a parent");
  plan = GoodPlan();
  plan.lanes[0].fanouts = {{0, {1}, {}}};
  ExpectInvalid(plan, "'c' is not reached");
  plan = GoodPlan();
  plan.lanes[0].source = 3;
  ExpectInvalid(plan, "source 3 is not a member index");
  // A cycle detached from the source: everyone but the source has exactly one parent.
  plan = GoodPlan();
  plan.lanes[0].fanouts = {{1, {2}, {}}, {2, {1}, {}}};
  ExpectInvalid(plan, "is not reached from the source");
  plan = GoodPlan();
  plan.lanes[0].fanouts.push_back({0, {}, {}});
  ExpectInvalid(plan, "has two fanouts");
  plan = GoodPlan();
  plan.lanes[1].fanouts[0].streams = {1};
  ExpectInvalid(plan, "1 stream counts for 2 children");
  plan = GoodPlan();
  plan.lanes[1].fanouts[0].streams = {1, 0};
  ExpectInvalid(plan, "stream counts must be >= 1");
  for (double rate : {-1.0, std::nan(""), std::numeric_limits<double>::infinity(), 2e15}) {
    plan = GoodPlan();
    plan.lanes[1].planned_bps = rate;
    ExpectInvalid(plan, "planned rate must be from 0 to 1e15 bit/s");
  }
}

// The chunk rule checked from ranges alone agrees with counting chunk by chunk, on random
// lanes mixing steps, blocks, single chunks, gaps and overlaps.
TEST(ValidatePlan, ChunkSetsFromRangesAgreeWithCountingEachChunk) {
  SplitMix64 random(30);
  int valid = 0, overlapping = 0, uncovered = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Plan plan = GoodPlan();
    plan.chunk_bytes = 1;
    plan.payload_bytes = 1 + random.Below(60);
    const uint64_t n = plan.NumChunks();
    std::vector<std::vector<int>> lanes_of(n);
    for (size_t l = 0; l < plan.lanes.size(); ++l) {
      plan.lanes[l].chunks.clear();
      const size_t count = random.Below(4);
      for (size_t i = 0; i < count; ++i) {
        const uint64_t begin = random.Below(n), end = begin + 1 + random.Below(n - begin);
        const uint64_t step = 1 + random.Below(7);
        plan.lanes[l].chunks.push_back({begin, end, step});
        for (uint64_t c = begin; c < end; c += step) lanes_of[c].push_back(static_cast<int>(l));
      }
    }
    // Half of the trials: lane 1 takes every chunk lane 0 does not, so that some are valid.
    if (trial % 2 == 0) {
      plan.lanes[1].chunks.clear();
      for (uint64_t c = 0; c < n; ++c) {
        std::erase(lanes_of[c], 1);
        if (lanes_of[c].empty()) {
          plan.lanes[1].chunks.push_back({c, c + 1, 1});
          lanes_of[c].push_back(1);
        }
      }
    }
    int64_t twice = -1, none = -1;
    for (uint64_t c = 0; c < n; ++c) {
      if (lanes_of[c].size() > 1 && twice < 0) twice = static_cast<int64_t>(c);
      if (lanes_of[c].empty() && none < 0) none = static_cast<int64_t>(c);
    }
    const Status status = ValidatePlan(plan);
    if (twice >= 0) {
      ++overlapping;
      ASSERT_FALSE(status.ok()) << trial;
      // Some chunk in two lanes, named with both.
      uint64_t named = 0;
      int a = -1, b = -1;
      ASSERT_EQ(std::sscanf(status.message().c_str(), "chunk %lu is in lane %d and lane %d", &named, &a, &b), 3)
          << status.message();
      ASSERT_LT(named, n);
      EXPECT_NE(std::find(lanes_of[named].begin(), lanes_of[named].end(), a), lanes_of[named].end()) << status.message();
      EXPECT_NE(std::find(lanes_of[named].begin(), lanes_of[named].end(), b), lanes_of[named].end()) << status.message();
    } else if (none >= 0) {
      ++uncovered;
      EXPECT_EQ(status.message(), "chunk " + std::to_string(none) + " is in no lane") << trial;
    } else {
      ++valid;
      EXPECT_TRUE(status.ok()) << trial << ": " << status.ToString();
    }
  }
  EXPECT_GT(valid, 100);
  EXPECT_GT(overlapping, 100);
  EXPECT_GT(uncovered, 100);
}

TEST(ValidatePlan, TwoToTheThirtyChunksInFourThousandLanesWithoutCountingThem) {
  Plan plan = GoodPlan();
  plan.chunk_bytes = 1;
  plan.payload_bytes = kMaxPlanChunks;
  const Lane tree = plan.lanes[0];
  plan.lanes.clear();
  for (uint64_t l = 0; l < 4096; ++l) {
    plan.lanes.push_back(tree);
    plan.lanes.back().chunks = {{l, kMaxPlanChunks, 4096}};
  }
  EXPECT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan).ToString();
  plan.lanes[7].chunks = {{7, kMaxPlanChunks - 4096, 4096}};
  EXPECT_EQ(ValidatePlan(plan).message(), "chunk " + std::to_string(kMaxPlanChunks - 4089) + " is in no lane");
}

TEST(ValidatePlan, LanesThatShareChunksHaveAtMostTwoToTheTwentyFour) {
  Plan plan = GoodPlan();
  plan.shared_chunks = true;
  EXPECT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan).ToString();
  plan.chunk_bytes = 1;
  plan.payload_bytes = kMaxSharedLaneChunks + 1;
  plan.lanes[0].chunks = {{0, plan.payload_bytes, 2}};
  plan.lanes[1].chunks = {{1, plan.payload_bytes, 2}};
  plan.shared_chunks = false;
  EXPECT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan).ToString();
  plan.shared_chunks = true;
  ExpectInvalid(plan, "a plan whose lanes share chunks has at most 16777216 chunks");
}

TEST(ValidatePlan, RejectsBrokenChunkSets) {
  Plan plan = GoodPlan();
  plan.lanes[1].chunks = {{1, 4, 1}};
  ExpectInvalid(plan, "chunk 2 is in lane 0 and lane 1");
  plan = GoodPlan();
  plan.lanes[1].chunks = {{1, 2, 1}};
  ExpectInvalid(plan, "chunk 3 is in no lane");
  plan = GoodPlan();
  plan.lanes[1].chunks = {{1, 9, 2}};
  ExpectInvalid(plan, "payload has 4 chunks");
  plan = GoodPlan();
  plan.lanes[1].chunks = {{1, 4, 0}};
  ExpectInvalid(plan, "step 0");
  plan = GoodPlan();
  plan.chunk_bytes = 0;
  ExpectInvalid(plan, "a chunk must be from 1 byte to 64 MiB, not 0 bytes");
  plan = GoodPlan();
  plan.chunk_bytes = kMaxChunkBytes + 1;
  ExpectInvalid(plan, "a chunk must be from 1 byte to 64 MiB");
  plan = GoodPlan();
  plan.lanes.clear();
  ExpectInvalid(plan, "no lanes");
}

TEST(ValidatePlan, EmptyPayloadNeedsNoChunks) {
  Plan plan = GoodPlan();
  plan.payload_bytes = 0;
  plan.lanes[0].chunks = {};
  plan.lanes[1].chunks = {};
  EXPECT_TRUE(ValidatePlan(plan).ok());
}

TEST(ValidatePlanOn, MembersMustBeNodes) {
  NetworkModel net;
  net.switches.push_back({"s", -1});
  net.nodes = {{"a", 0}, {"b", 0}};
  Status status = ValidatePlanOn(GoodPlan(), net);
  EXPECT_NE(status.message().find("'c' is not a node"), std::string::npos) << status.message();
}

// The chunk rules every reader of chunk sizes shares (planners, the daemon's Prepare, torrents).
TEST(ChunkRules, ChunksUpTo64MiBAndPiecesPowersOfTwoFrom16KiB) {
  EXPECT_TRUE(CheckChunkBytes(1).ok());
  EXPECT_TRUE(CheckChunkBytes(kMaxChunkBytes).ok());
  EXPECT_FALSE(CheckChunkBytes(0).ok());
  EXPECT_FALSE(CheckChunkBytes(kMaxChunkBytes + 1).ok());
  EXPECT_FALSE(CheckChunkBytes(uint64_t{1} << 40).ok());
  for (uint64_t bytes = kMinPieceBytes; bytes <= kMaxChunkBytes; bytes *= 2) EXPECT_TRUE(CheckPieceBytes(bytes).ok()) << bytes;
  for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, kMinPieceBytes / 2, kMinPieceBytes + 1, 3 * kMinPieceBytes,
                         kMaxChunkBytes * 2, uint64_t{1} << 63}) {
    Status status = CheckPieceBytes(bytes);
    EXPECT_FALSE(status.ok()) << bytes;
    EXPECT_NE(status.message().find("power of two from 16 KiB to 64 MiB"), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace gridcast
