#include "collectives/validate_plan.h"

#include <gtest/gtest.h>

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
  ExpectInvalid(plan, "chunk size");
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

}  // namespace
}  // namespace gridcast
