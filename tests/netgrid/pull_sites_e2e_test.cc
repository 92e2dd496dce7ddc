// Pull across two sites whose source cannot seed a copy per site with room to spare (netgrid:
// 4 + 4 nodes, 20mbit NICs; the fast site's uplink 80mbit, the slow one's 10mbit, which sets
// the bound). The swarm plan has the fast site import a quarter of its copy from the slow site
// over its idle upward uplink, each imported piece through one member, and the slow site take
// nothing from the fast one (collectives/planners/swarm.cc). Checked on the wire: what crossed
// between the sites, and that the fast site still finishes from the source when every member
// it imports from is killed.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "netgrid_send_fixture.h"

namespace gridcast {
namespace {

using namespace std::chrono_literals;

constexpr const char* kState = "/tmp/gridcast-pull-sites-e2e";

constexpr const char* kTopology = R"(name: pull-sites-e2e
switches:
  - name: core
  - name: fast
    parent: core
    uplink: 80mbit
  - name: slow
    parent: core
    uplink: 10mbit
nodes:
  - switch: fast
    count: 4
    up: 20mbit
    down: 20mbit
  - switch: slow
    count: 4
    up: 20mbit
    down: 20mbit
source: fast-0
)";

constexpr uint64_t kPayloadBytes = 6 << 20;  // about 5 s through the 10mbit uplink

class PullSitesE2ETest : public NetgridSendFixture {
 protected:
  PullSitesE2ETest() : NetgridSendFixture(kState, kTopology) {}
  void SetUp() override {
    NetgridSendFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    payload_ = MakePayload("sites.bin", kPayloadBytes, 52);
  }

  // Payload copies moved from one side to another in the observations: "source", "fast" or
  // "slow" for the sender, "fast" or "slow" for the receiver.
  static std::map<std::string, double> CopiesBetweenSites(const fs::path& observations) {
    std::ifstream in(observations);
    const nlohmann::json obs = nlohmann::json::parse(in, nullptr, false);
    std::map<std::string, double> copies;
    if (!obs.is_object()) return copies;
    auto side = [](const std::string& member) {
      if (member == "fast-0") return std::string("source");
      return member.substr(0, member.find('-'));
    };
    for (const auto& pair : obs["pairs"]) {
      copies[side(pair["from"]) + "->" + side(pair["to"])] +=
          pair["bytes"].get<double>() / static_cast<double>(kPayloadBytes);
    }
    return copies;
  }

  fs::path payload_;
};

TEST_F(PullSitesE2ETest, TheFastSiteImportsAQuarterOnceAndTheSlowSiteTakesOnlyTheSourcesCopy) {
  const fs::path observations = fs::path(kState) / "observations.json";
  const Sent sent = StartSend(payload_, "sites.bin", {"--mode", "pull", "--observations", observations.string()}).get();
  ExpectEveryCopy(sent);
  std::map<std::string, double> copies = CopiesBetweenSites(observations);
  for (const auto& [pair, count] : copies) std::printf("%s: %.3f copies\n", pair.c_str(), count);
  // The plan: the fast site's 3 receivers take 3 of 4 stripes from the source and the 4th, a
  // piece each round, from the slow site; every piece enters each site once. BitTorrent's end
  // game may fetch a last block twice.
  EXPECT_NEAR(copies["slow->fast"], 0.25, 0.03);
  EXPECT_NEAR(copies["source->fast"], 0.75, 0.03);
  EXPECT_NEAR(copies["source->slow"], 1.0, 0.03);
  EXPECT_EQ(copies["fast->slow"], 0) << "the slow site took a piece from the fast one";
  EXPECT_NEAR(copies["fast->fast"], 2.0, 0.05);
  EXPECT_NEAR(copies["slow->slow"], 3.0, 0.05);
}

// Every slow-site member killed once slow-1 holds pieces (the broadcast under way there): the
// fast site's members stop hearing of the pieces they import, and once nothing arrives for the
// swarm's stall timeout they take them from the source. The send names the four lost and the
// fast site holds verified copies.
TEST_F(PullSitesE2ETest, WithEveryExporterKilledTheFastSiteFinishesFromTheSource) {
  std::future<Sent> send = StartSend(payload_, "sites-killed.bin", {"--mode", "pull"});
  ASSERT_TRUE(WaitUntilMemberHoldsChunks("slow-1", 30s)) << "the broadcast never reached slow-1";
  const std::vector<std::string> killed = {"slow-0", "slow-1", "slow-2", "slow-3"};
  for (const std::string& name : killed) SignalNetgridNode(Node(name), SIGKILL);
  const Sent sent = send.get();
  std::printf("exporters killed: exit %d after %.1f s\n", sent.exit_code, sent.seconds);
  EXPECT_EQ(sent.exit_code, 1) << sent.output;
  ASSERT_TRUE(sent.summary.is_object()) << sent.output;
  const std::string error = sent.summary.value("error", "");
  for (const std::string& name : killed) EXPECT_NE(error.find(name), std::string::npos) << name << ": " << error;
  for (const char* name : {"fast-1", "fast-2", "fast-3"}) EXPECT_TRUE(DigestOk(sent, name)) << name << sent.output;
  EXPECT_LT(sent.seconds, 40.0) << "the fast site waited for the dead (the stall timeout is 60 s)";
}

}  // namespace
}  // namespace gridcast
