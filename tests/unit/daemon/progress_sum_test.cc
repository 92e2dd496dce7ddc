// The progress sum a control tree carries up: done members counted, the slowest receiving
// member found whether or not it reports lane trouble (the source discounts the slowest
// member's own reports: plan_repairer.h), and the members needing attention named.
#include "daemon/coordinator/progress_sum.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

constexpr const char* kList = "list-digest";

v1::MemberProgress Member(const std::string& name, v1::MemberState state, uint64_t chunks) {
  v1::MemberProgress entry;
  entry.set_member(name);
  entry.set_state(state);
  entry.set_chunks_done(chunks);
  if (state == v1::MEMBER_STATE_DONE) entry.set_chunk_list_sha256(kList);
  return entry;
}

v1::MemberProgress WithTrouble(v1::MemberProgress entry, const std::string& parent) {
  v1::LaneTrouble* trouble = entry.add_lane_trouble();
  trouble->set_lane(0);
  trouble->set_parent(parent);
  trouble->set_reason(v1::REPAIR_REASON_SILENT);
  return entry;
}

TEST(ProgressSumTest, TheSlowestMemberIsFoundEvenWhenItReportsLaneTrouble) {
  v1::SubtreeProgress sum;
  CountMember(Member("done", v1::MEMBER_STATE_DONE, 40), kList, &sum);
  CountMember(Member("healthy", v1::MEMBER_STATE_RUNNING, 30), kList, &sum);
  CountMember(WithTrouble(Member("straggler", v1::MEMBER_STATE_RUNNING, 5), "m1"), kList, &sum);
  EXPECT_EQ(sum.members(), 3u);
  EXPECT_EQ(sum.done(), 1u);
  EXPECT_EQ(sum.chunks_done(), 75u);
  EXPECT_EQ(sum.slowest_member(), "straggler");
  EXPECT_EQ(sum.slowest_chunks(), 5u);
  ASSERT_EQ(sum.attention_size(), 1);
  EXPECT_EQ(sum.attention(0).member(), "straggler");
  EXPECT_EQ(sum.attention(0).lane_trouble_size(), 1);
}

TEST(ProgressSumTest, AFailedMemberNeedsAttentionAndIsNotTheSlowest) {
  v1::SubtreeProgress sum;
  CountMember(Member("failed", v1::MEMBER_STATE_FAILED, 0), kList, &sum);
  CountMember(Member("running", v1::MEMBER_STATE_RUNNING, 9), kList, &sum);
  EXPECT_EQ(sum.slowest_member(), "running");
  ASSERT_EQ(sum.attention_size(), 1);
  EXPECT_EQ(sum.attention(0).member(), "failed");
}

TEST(ProgressSumTest, DoneBeforeTheListIsKnownIsStillReceiving) {
  v1::SubtreeProgress sum;
  CountMember(Member("early", v1::MEMBER_STATE_DONE, 12), "", &sum);
  EXPECT_EQ(sum.done(), 0u);
  EXPECT_EQ(sum.slowest_member(), "early");
  EXPECT_EQ(sum.attention_size(), 0);
  v1::MemberProgress wrong = Member("wrong", v1::MEMBER_STATE_DONE, 12);
  wrong.set_chunk_list_sha256("another");
  CountMember(wrong, kList, &sum);
  ASSERT_EQ(sum.attention_size(), 1) << "done with another list";
  EXPECT_EQ(sum.attention(0).member(), "wrong");
}

TEST(ProgressSumTest, SubtreesAddUpAndTheSlowerOfTheirSlowestWins) {
  v1::SubtreeProgress left, right;
  CountMember(Member("a", v1::MEMBER_STATE_RUNNING, 8), kList, &left);
  CountMember(WithTrouble(Member("b", v1::MEMBER_STATE_RUNNING, 3), "a"), kList, &right);
  CountMember(Member("c", v1::MEMBER_STATE_DONE, 20), kList, &right);
  AddSum(right, &left);
  EXPECT_EQ(left.members(), 3u);
  EXPECT_EQ(left.done(), 1u);
  EXPECT_EQ(left.chunks_done(), 31u);
  EXPECT_EQ(left.slowest_member(), "b");
  EXPECT_EQ(left.slowest_chunks(), 3u);
  ASSERT_EQ(left.attention_size(), 1);
  EXPECT_EQ(left.attention(0).member(), "b");
  v1::SubtreeProgress empty;
  AddSum(empty, &left);
  EXPECT_EQ(left.slowest_member(), "b") << "an empty subtree has no slowest member";
}

}  // namespace
}  // namespace gridcast
