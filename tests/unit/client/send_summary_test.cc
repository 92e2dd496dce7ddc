// The send summary's times: completion_s from the request (the source's time before the start
// included), transfer_s from the start, and what a daemon that did not say when it started gives.
#include "client/send_summary.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

v1::BroadcastProgress FinishedBroadcast() {
  v1::BroadcastProgress last;
  last.set_plan_id(std::string(16, '\1'));
  last.set_algorithm("chain");
  last.set_payload_bytes(1000);
  last.set_chunk_bytes(100);
  last.set_finished(true);
  last.set_payload_chunk_list_sha256(std::string(32, 'd'));
  for (const auto& [name, finished_s] : {std::pair{"m1", 2.0}, std::pair{"m2", 3.0}}) {
    v1::MemberProgress* member = last.add_members();
    member->set_member(name);
    member->set_state(v1::MEMBER_STATE_DONE);
    member->set_chunk_list_sha256(std::string(32, 'd'));
    member->set_finished_s(finished_s);
  }
  return last;
}

TEST(SendSummaryTest, CompletionRunsFromTheRequestAndTheTransferFromTheStart) {
  v1::BroadcastProgress last = FinishedBroadcast();
  last.mutable_control()->set_first_byte_s(1.25);
  last.mutable_control()->set_started_s(1.5);
  const ClusterMember source{"m0", "unix:/x", "127.0.0.1:1", "127.0.0.1:2"};
  const SendSummary s = Summarize(last, SourceChoice{&source, std::nullopt}, Status::Ok());
  EXPECT_TRUE(s.verified);
  EXPECT_DOUBLE_EQ(s.transfer_s, 3.0);
  EXPECT_DOUBLE_EQ(s.completion_s, 4.5);
  ASSERT_TRUE(s.control && s.control->started_s && s.control->first_byte_s);
  EXPECT_DOUBLE_EQ(*s.control->started_s, 1.5);

  const nlohmann::json j = SummaryJson(s);
  EXPECT_DOUBLE_EQ(j.at("completion_s").get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(j.at("transfer_s").get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j.at("control").at("started_s").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j.at("control").at("first_byte_s").get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(j.at("rate_bps").get<double>(), 8.0 * 1000 / 4.5);
}

TEST(SendSummaryTest, WithoutAStartTimeTheTransferIsAllThereIs) {
  v1::BroadcastProgress last = FinishedBroadcast();
  last.mutable_control()->set_first_byte_s(-1);
  last.mutable_control()->set_started_s(-1);  // never started, or a daemon before the counter
  const ClusterMember source{"m0", "unix:/x", "127.0.0.1:1", "127.0.0.1:2"};
  const SendSummary s = Summarize(last, SourceChoice{&source, std::nullopt}, Status::Ok());
  EXPECT_DOUBLE_EQ(s.completion_s, 3.0);
  EXPECT_DOUBLE_EQ(s.transfer_s, 3.0);
  EXPECT_TRUE(SummaryJson(s).at("control").at("started_s").is_null());
}

TEST(SendSummaryTest, RepairsAreListedInOrderAndAlwaysPresentInTheJson) {
  v1::BroadcastProgress last = FinishedBroadcast();
  const ClusterMember source{"m0", "unix:/x", "127.0.0.1:1", "127.0.0.1:2"};
  EXPECT_TRUE(SummaryJson(Summarize(last, SourceChoice{&source, std::nullopt}, Status::Ok())).at("repairs").empty());
  v1::Repair* repair = last.add_repairs();
  repair->set_member("m3");
  repair->set_at_s(11.3);
  repair->set_reason(v1::REPAIR_REASON_GONE);
  repair->set_children_moved(3);
  repair->add_lanes(0);
  repair->add_lanes(1);
  last.add_repairs()->set_member("m5");
  last.mutable_repairs(1)->set_reason(v1::REPAIR_REASON_SILENT);
  v1::Repair* slow = last.add_repairs();
  slow->set_member("m7");
  slow->set_at_s(6.2);
  slow->set_reason(v1::REPAIR_REASON_SLOW);
  slow->set_children_moved(1);
  slow->add_lanes(1);
  slow->set_measured_bps(1.6e6);
  slow->set_expected_bps(24.1e6);
  const SendSummary s = Summarize(last, SourceChoice{&source, std::nullopt}, Status::Ok());
  ASSERT_EQ(s.repairs.size(), 3u);
  EXPECT_EQ(s.repairs[1].reason, "silent");
  const nlohmann::json j = SummaryJson(s).at("repairs");
  ASSERT_EQ(j.size(), 3u);
  EXPECT_FALSE(j[1].contains("measured_bps"));  // only a slow repair says what was seen
  EXPECT_EQ(j[2].at("measured_bps"), 1.6e6);
  EXPECT_EQ(j[2].at("expected_bps"), 24.1e6);
  EXPECT_EQ(j[0], nlohmann::json::parse(
                      R"({"member": "m3", "at_s": 11.3, "reason": "gone", "children_moved": 3, "lanes": [0, 1]})"));
  EXPECT_EQ(j[1].at("member"), "m5");
  testing::internal::CaptureStdout();
  PrintSummary(s);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("repaired   m3 gone at 11.3 s, 3 children moved in lanes 0, 1\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("repaired   m7 slow at 6.2 s, 1 child moved in lane 1 (it brought 1.6 mbit/s where its "
                         "child's other lanes came at 24.1)"),
            std::string::npos)
      << printed;
}

}  // namespace
}  // namespace gridcast
