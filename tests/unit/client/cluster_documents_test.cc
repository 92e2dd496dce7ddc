// The entries of `gridcast status --json` and `gridcast list --json` (client/cluster_documents.h),
// and when a document reports trouble (the command's exit code 1).
#include "client/cluster_documents.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

TEST(ClusterDocumentsTest, AStatusEntryNamesEachPlanAndServe) {
  v1::StatusResponse response;
  v1::PlanStatus* plan = response.add_plans();
  plan->set_plan_id(std::string(16, '\xab'));
  plan->set_name("data.bin");
  plan->set_state(v1::MEMBER_STATE_FAILED);
  plan->set_error("disk full");
  plan->set_chunks_done(3);
  plan->set_chunks_total(8);
  v1::ServeStatus* serve = response.add_serves();
  serve->set_serve_id(std::string(16, '\x01'));
  serve->set_state(v1::SERVE_STATE_SERVING);
  const nlohmann::json entry = MemberStatusJson("m1", response);
  EXPECT_EQ(entry["name"], "m1");
  ASSERT_EQ(entry["plans"].size(), 1u);
  EXPECT_EQ(entry["plans"][0]["plan_id"], "abababababababababababababababab");
  EXPECT_EQ(entry["plans"][0]["state"], "failed");
  EXPECT_EQ(entry["plans"][0]["error"], "disk full");
  EXPECT_EQ(entry["plans"][0]["chunks_done"], 3);
  EXPECT_EQ(entry["plans"][0]["is_source"], false);
  EXPECT_EQ(entry["serves"][0]["state"], "serving");
  EXPECT_EQ(entry["serves"][0]["serve_id"], "01010101010101010101010101010101");
  EXPECT_FALSE(DocumentReportsTrouble({{"members", {entry}}}));
}

TEST(ClusterDocumentsTest, AListEntryGivesVerificationOnlyWhenAsked) {
  v1::ListResponse response;
  response.set_data_dir("/var/lib/gridcast");
  v1::HeldPayload* complete = response.add_payloads();
  complete->set_name("a.bin");
  complete->set_size_bytes(100);
  complete->set_complete(true);
  complete->set_sha256(std::string(32, '\x11'));
  complete->set_digest(v1::CHUNK_DIGEST_XXH3);
  v1::HeldPayload* partial = response.add_payloads();
  partial->set_name("b.bin");
  partial->set_in_memory(true);
  nlohmann::json entry = MemberListJson("m2", response);
  EXPECT_EQ(entry["data_dir"], "/var/lib/gridcast");
  ASSERT_EQ(entry["payloads"].size(), 2u);
  EXPECT_EQ(entry["payloads"][0]["sha256"], std::string(64, '1'));
  EXPECT_EQ(entry["payloads"][0]["digest"], "xxh3");
  EXPECT_FALSE(entry["payloads"][0].contains("verify"));
  EXPECT_FALSE(entry["payloads"][1].contains("sha256"));
  EXPECT_EQ(entry["payloads"][1]["in_memory"], true);
  EXPECT_FALSE(DocumentReportsTrouble({{"members", {entry}}}));

  complete->set_scrub(v1::SCRUB_RESULT_BAD);
  complete->add_bad_chunks(4);
  entry = MemberListJson("m2", response);
  EXPECT_EQ(entry["payloads"][0]["verify"], "bad");
  EXPECT_EQ(entry["payloads"][0]["bad_chunks"], nlohmann::json::array({4}));
  EXPECT_TRUE(DocumentReportsTrouble({{"members", {entry}}}));
  EXPECT_TRUE(DocumentReportsTrouble({{"members", {{{"name", "m3"}, {"error", "unreachable"}}}}}));
}

TEST(ClusterDocumentsTest, AMemberThatDoesNotAnswerIsAnEntryWithItsErrorAndOneOutsideIsRefused) {
  ClusterConfig cluster;
  cluster.members.push_back({"m0", "unix:/nonexistent", "127.0.0.1:1", "127.0.0.1:2"});
  const Result<nlohmann::json> document = StatusDocument(cluster, "m9", "");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(document.status().message(), "'m9' is not in the cluster");

  const Result<nlohmann::json> unanswered = StatusDocument(cluster, "", "");
  ASSERT_TRUE(unanswered.ok()) << unanswered.status().ToString();
  ASSERT_EQ((*unanswered)["members"].size(), 1u);
  EXPECT_EQ((*unanswered)["members"][0]["name"], "m0");
  EXPECT_NE((*unanswered)["members"][0]["error"].get<std::string>().find("member 'm0' is unreachable"), std::string::npos)
      << unanswered->dump();
  EXPECT_TRUE(DocumentReportsTrouble(*unanswered));
}

}  // namespace
}  // namespace gridcast
