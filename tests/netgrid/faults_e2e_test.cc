// Network faults in the middle of a broadcast, on a netgrid of two sites (3 + 3 nodes, 20mbit
// NICs, 40mbit uplinks): a member's link down for 3 s, a partition between the sites, a
// member's daemon paused (SIGSTOP), the member whose lane crosses the sites killed, a straggler
// (a member shaped to a tenth). Each ends with every member verified, or with a non-zero exit
// whose error names every member not done while the reachable ones hold verified copies; never
// a hang, never a copy reported that is not there. After each fault heals, the next send of the
// same payload completes.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "netgrid_send_fixture.h"

namespace gridcast {
namespace {

using namespace std::chrono_literals;

constexpr const char* kState = "/tmp/gridcast-faults-e2e";

constexpr const char* kTopology = R"(name: faults-e2e
switches:
  - name: core
  - name: east
    parent: core
    uplink: 40mbit
  - name: west
    parent: core
    uplink: 40mbit
nodes:
  - switch: east
    count: 3
    up: 20mbit
    down: 20mbit
  - switch: west
    count: 3
    up: 20mbit
    down: 20mbit
source: east-0
)";

class FaultsE2ETest : public NetgridSendFixture {
 protected:
  FaultsE2ETest() : NetgridSendFixture(kState, kTopology) {}
  void SetUp() override {
    NetgridSendFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // 12 MiB: about 5 s at 20mbit, so a fault 2 s in lands mid-broadcast.
    payload_ = MakePayload("faults.bin", 12 << 20, 15);
  }
  std::future<Sent> StartSend(const std::string& name, std::vector<std::string> args) const {
    return NetgridSendFixture::StartSend(payload_, name, std::move(args));
  }

  fs::path payload_;
};

// Shorter than the 5 s after which the source gives a member up (a longer outage of a member
// nobody depends on ends the send without it, naming it lost: below, and PushLost).
TEST_F(FaultsE2ETest, AMembersLinkDownForThreeSecondsCostsTimeNotTheCopy) {
  std::future<Sent> send = StartSend("link.bin", {"--algo", "auto"});
  std::this_thread::sleep_for(2s);
  Ip({"-n", Node("west-0").netns, "link", "set", "eth0", "down"});
  std::this_thread::sleep_for(3s);
  Ip({"-n", Node("west-0").netns, "link", "set", "eth0", "up"});
  const Sent sent = send.get();
  ExpectEveryCopy(sent);
  ASSERT_TRUE(sent.summary.is_object());
  std::printf("link down 3 s: verified, completion %.1f s\n", sent.summary["completion_s"].get<double>());
  EXPECT_GT(sent.summary["completion_s"].get<double>(), 5.0) << "the outage did not fall mid-broadcast";
}

// The east site's uplink goes down for good 2 s in. With pull repair the east members finish
// (east-2's tree parent may be in the west); the west ones stop receiving, and the send fails
// after the stall timeout naming each of them. Healed, the next send completes.
TEST_F(FaultsE2ETest, APartitionNamesTheCutOffMembersAndTheReachableOnesFinish) {
  std::future<Sent> send = StartSend("split.bin", {"--algo", "auto", "--mode", "hybrid", "--stall-timeout", "10"});
  std::this_thread::sleep_for(2s);
  Ip({"-n", SwitchNetns("east"), "link", "set", "uplink", "down"});
  const Sent cut = send.get();
  Ip({"-n", SwitchNetns("east"), "link", "set", "uplink", "up"});
  EXPECT_NE(cut.exit_code, 0) << cut.output;
  ASSERT_TRUE(cut.summary.is_object()) << cut.output;
  EXPECT_FALSE(cut.summary["verified"].get<bool>());
  const std::string error = cut.summary.value("error", "");
  std::printf("partition: exit %d after %.1f s: %s\n", cut.exit_code, cut.seconds, error.c_str());
  EXPECT_NE(error.find("no member verified a chunk for 10 s"), std::string::npos) << error;
  for (const char* member : {"west-0", "west-1", "west-2"}) {
    EXPECT_NE(error.find(member), std::string::npos) << member << " not named: " << error;
    EXPECT_FALSE(DigestOk(cut, member)) << member;
  }
  EXPECT_TRUE(DigestOk(cut, "east-1")) << cut.output;
  EXPECT_TRUE(DigestOk(cut, "east-2")) << cut.output;
  EXPECT_LT(cut.seconds, 90.0) << "no hang: the stall timeout ended it";

  ExpectEveryCopy(StartSend("split.bin", {"--algo", "auto"}).get());
}

TEST_F(FaultsE2ETest, APausedDaemonIsWaitedForAndOnePausedForGoodIsNamed) {
  std::future<Sent> send = StartSend("pause.bin", {"--algo", "auto"});
  std::this_thread::sleep_for(2s);
  SignalNetgridNode(Node("west-0"), SIGSTOP);
  std::this_thread::sleep_for(3s);
  SignalNetgridNode(Node("west-0"), SIGCONT);
  const Sent resumed = send.get();
  ExpectEveryCopy(resumed);
  std::printf("paused 3 s: verified after %.1f s\n", resumed.seconds);

  // Paused for good: given up on after 5 s unreachable. The others finish where they do not
  // depend on it (the send then exits 1 naming it lost), else the stall timeout ends the send
  // with it named lost among those not done.
  send = StartSend("pause-2.bin", {"--algo", "auto", "--stall-timeout", "10"});
  std::this_thread::sleep_for(2s);
  SignalNetgridNode(Node("west-0"), SIGSTOP);
  const Sent paused = send.get();
  SignalNetgridNode(Node("west-0"), SIGCONT);
  EXPECT_NE(paused.exit_code, 0) << paused.output;
  ASSERT_TRUE(paused.summary.is_object()) << paused.output;
  const std::string error = paused.summary.value("error", "");
  std::printf("paused for good: exit %d after %.1f s: %s\n", paused.exit_code, paused.seconds, error.c_str());
  EXPECT_TRUE(error.find("west-0 (lost)") != std::string::npos || error.find("lost: west-0") != std::string::npos)
      << error;
  EXPECT_FALSE(DigestOk(paused, "west-0"));
  // Given up on 5 s after it stopped answering; the patch around it and the release wait no
  // longer for it than a progress round may (they took 77 s with a call timeout each).
  EXPECT_LT(paused.seconds, 30.0) << "the send waited for the paused member";

  ExpectEveryCopy(StartSend("pause-2.bin", {"--algo", "auto"}).get());
}

// The member whose lane crosses the sites (multilane: lane 0 runs east-1 -> east-2 -> {west-1,
// west-2}) is killed 2 s in: its children beyond the uplink are re-fed from live members, the
// others verify their copies, and the send names east-2 lost (exit 1) without waiting for it.
TEST_F(FaultsE2ETest, AParentWhoseLaneCrossesTheSitesKilledIsRoutedAround) {
  constexpr const char* kKilled = "east-2";
  std::future<Sent> send = StartSend("crossing.bin", {"--algo", "multilane", "--mode", "push"});
  std::this_thread::sleep_for(2s);
  SignalNetgridNode(Node(kKilled), SIGKILL);
  const Sent sent = send.get();
  EXPECT_EQ(sent.exit_code, 1) << sent.output;
  ASSERT_TRUE(sent.summary.is_object()) << sent.output;
  EXPECT_NE(sent.summary.value("error", "").find(std::string("lost: ") + kKilled), std::string::npos) << sent.output;
  for (const NetgridNode& node : state_.nodes) {
    if (node.name != kKilled && node.name != "east-0") {
      EXPECT_TRUE(DigestOk(sent, node.name)) << node.name;
    }
  }
  int moved = -1;
  for (const auto& repair : sent.summary["repairs"]) {
    if (repair["member"] == kKilled && repair["reason"] == "gone") moved = repair["children_moved"].get<int>();
  }
  EXPECT_GE(moved, 2) << sent.summary["repairs"].dump();
  std::printf("crossing parent killed: exit %d after %.1f s\n", sent.exit_code, sent.seconds);
  EXPECT_LT(sent.seconds, 30.0) << "the others waited for the dead (the stall timeout is 60 s)";
}

// A straggler: an interior member of the two trees (multilane) shaped to a tenth of its NIC,
// both ways, 2 s in, while the topology still says 20mbit. Its children see their lane from it
// far behind their other lane and say so; the source moves them (reason slow) and the slowed
// member keeps receiving as a leaf. Unshaped later (recovering), it finishes with no second
// patch (its children may find it silent rather than slow: TCP backs off for a second on a
// link shaped to a tenth). On a fresh netgrid the source's NIC may starve the lane to the far
// site at first (TCP favours the near one), and a member starved both ways can be the slowest
// for a moment and be moved as slow, or east-2 never found (docs/repair.md, step 5): the test
// warms the paths first. Extra repairs cost time, not a copy.
TEST_F(FaultsE2ETest, AStragglersChildrenAreMovedAndItFinishesAsALeaf) {
  constexpr const char* kSlowed = "east-2";  // lane 0: east-1 -> east-2 -> {west-1, west-2}
  constexpr int kSlowedIndex = 2;  // its index in kTopology's order: its switch port
  const fs::path payload = MakePayload("straggler.bin", 32 << 20, 16);  // 13.4 s at 20mbit
  // A send first, so the kernel's TCP metrics of every path are warm, as on a network in use: on
  // a fresh one the source's NIC starves the far lane for seconds (see above).
  ExpectEveryCopy(NetgridSendFixture::StartSend(payload_, "warm.bin", {"--algo", "multilane"}).get());
  std::future<Sent> send = NetgridSendFixture::StartSend(payload, "straggler.bin", {"--algo", "multilane"});
  std::this_thread::sleep_for(2s);
  const auto shape = [&](double rate_bps) {
    for (const auto& command : {ShapeCommand(Node(kSlowed).netns, "eth0", rate_bps),
                                ShapeCommand(SwitchNetns("east"), "port" + std::to_string(kSlowedIndex), rate_bps)}) {
      const Status shaped = RunChecked(command);
      EXPECT_TRUE(shaped.ok()) << shaped.ToString();
    }
  };
  shape(2e6);
  std::this_thread::sleep_for(20s);
  shape(20e6);
  const Sent sent = send.get();
  ExpectEveryCopy(sent);
  ASSERT_TRUE(sent.summary.is_object());
  const nlohmann::json& repairs = sent.summary["repairs"];
  int straggler = -1;
  for (size_t r = 0; r < repairs.size(); ++r) {
    if (repairs[r]["member"] == kSlowed) {
      // Slow, or silent where TCP backed off on its link for a second: moved either way.
      EXPECT_TRUE(repairs[r]["reason"] == "slow" || repairs[r]["reason"] == "silent") << repairs.dump();
      EXPECT_EQ(straggler, -1) << "repaired twice (no second patch when it recovers): " << repairs.dump();
      straggler = static_cast<int>(r);
    }
  }
  ASSERT_GE(straggler, 0) << repairs.dump();
  EXPECT_GE(repairs[straggler]["children_moved"].get<int>(), 1) << repairs.dump();
  EXPECT_LE(repairs.size(), 4u) << repairs.dump();
  double others_s = 0, slowed_s = 0;
  for (const auto& m : sent.summary["members"]) {
    double& latest = m["name"] == kSlowed ? slowed_s : others_s;
    latest = std::max(latest, m["finished_s"].get<double>());
  }
  std::printf("straggler: repaired at %.1f s (%zu repairs), the others done at %.1f s, %s at %.1f s\n",
              repairs[straggler]["at_s"].get<double>(), repairs.size(), others_s, kSlowed, slowed_s);
  // Left below it, its children would get its lane at a tenth: 16 MiB at 2mbit, over a minute.
  EXPECT_LT(others_s, 40.0);
  EXPECT_GT(slowed_s, others_s) << "the slowed member was not slowed";
}

}  // namespace
}  // namespace gridcast
