// The control tree (daemon/coordinator/control_tree.h) between real gridcastd processes on
// loopback. With --control-fanout 2 over 8 members the tree is m0 -> m1, m2; m1 -> m3, m4;
// m2 -> m5, m6; m3 -> m7: the source calls only m1 and m2, and m1, m2 and m3 relay.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

const std::vector<std::string> kFanoutTwo = {"--control-fanout", "2"};

TEST(ControlTreeTest, BroadcastsThroughTheTreeWithTheSourceCallingOnlyItsChildren) {
  LocalCluster cluster(GRIDCASTD, "ctree", 8, kFanoutTwo);
  const uint64_t size = (6 << 20) + 11;
  const std::string path = cluster.MakePayload("tree.bin", size);
  SendResult r = Send(cluster, {path, "--algo", "multilane", "--chunk", "64KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.json["verified"].get<bool>()) << r.output;
  ASSERT_EQ(r.json["members"].size(), 7u) << r.output;
  for (const auto& member : r.json["members"]) EXPECT_EQ(member["state"], "done") << member.dump();
  ExpectEverywhere(cluster, path, "tree.bin");
  // Every step (Prepare, Start, each progress round, Cancel) is one call to each of the two
  // children: an even count. The plan left the source twice, not seven times, and without its
  // chunk digests: they stream on the lanes (two copies of the list would be 6,208 bytes).
  const uint64_t rpcs = r.json["control"]["rpcs_at_source"].get<uint64_t>();
  const uint64_t bytes = r.json["control"]["bytes_at_source"].get<uint64_t>();
  const uint64_t chunks = (size + (64 << 10) - 1) / (64 << 10);
  EXPECT_GE(rpcs, 8u) << r.output;
  EXPECT_EQ(rpcs % 2, 0u) << r.output;
  EXPECT_LT(bytes, rpcs * 2048) << r.output;
  EXPECT_LT(bytes, 2 * chunks * 32) << r.output;
}

// m1 is down before the send: Prepare cannot reach m3 and m4 through it, and the broadcast
// fails at once with m1 named, instead of hanging; what m2's subtree prepared is released, and
// the daemons serve the next send.
TEST(ControlTreeTest, ADeadInteriorMemberFailsPrepareNamingIt) {
  LocalCluster cluster(GRIDCASTD, "ctree-dead", 8, kFanoutTwo);
  const std::string path = cluster.MakePayload("dead.bin", 1 << 20);
  cluster.Kill(1);
  const auto before = std::chrono::steady_clock::now();
  SendResult r = Send(cluster, {path, "--algo", "multilane"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("member 'm1'"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(60));
  cluster.Restart(1);
  SendResult again = Send(cluster, {path, "--algo", "multilane"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  ExpectEverywhere(cluster, path, "dead.bin");
}

// m3 (below m1 in the control tree) restarts mid-broadcast: m1, not the source, finds that it
// lost the plan, prepares and starts it again, and it resumes.
TEST(ControlTreeTest, ARestartedMemberIsPreparedAgainByItsControlParent) {
  // A restart under the sanitizers on a loaded host took 4.6 s: the source waits longer than
  // that before it goes on without the member.
  LocalCluster cluster(GRIDCASTD, "ctree-restart", 8,
                       {"--control-fanout", "2", "--window", "4", "--member-lost-after", "30"});
  const std::string path = cluster.MakePayload("restart.bin", 160u << 20);
  Result<ChildProcess> sender = ChildProcess::Start(
      {GRIDCAST_CLI, "send", path, "--cluster", cluster.cluster_file(), "--algo", "chain", "--chunk", "256KiB",
       "--json"},
      (cluster.dir() / "send.out").string());
  ASSERT_TRUE(sender.ok());
  ASSERT_NO_FATAL_FAILURE(KillOnceUnderWay(cluster, 3, {3}));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  cluster.Restart(3);
  EXPECT_EQ(sender->Wait(), 0) << ReadFile(cluster.dir() / "send.out");
  ExpectEverywhere(cluster, path, "restart.bin");
  EXPECT_NE(ReadFile(cluster.log(1)).find("member m3 lost the plan; preparing it again"), std::string::npos)
      << ReadFile(cluster.log(1));
  EXPECT_EQ(ReadFile(cluster.log(0)).find("member m3 lost the plan"), std::string::npos);
}

// Hybrid, with the source's two control children killed mid-broadcast (they are also interior
// members of the binary data trees): the source asks m3..m6 itself, everyone else finishes by
// pulling, and m1 and m2 are reported lost.
TEST(ControlTreeTest, SurvivorsBelowDeadControlParentsAreFollowedToTheEnd) {
  LocalCluster cluster(GRIDCASTD, "ctree-hybrid", 8, {"--control-fanout", "2", "--swarm-stall", "1"});
  const std::string path = cluster.MakePayload("tree-hybrid.bin", 96 << 20);
  auto send = std::async(std::launch::async, [&] {
    return Send(cluster, {path, "--mode", "hybrid", "--algo", "binary", "--chunk", "256KiB"});
  });
  ASSERT_NO_FATAL_FAILURE(KillOnceUnderWay(cluster, 7, {1, 2}));
  const SendResult r = send.get();
  ExpectLostAndTheRestVerified(r, cluster, {1, 2}, path, "tree-hybrid.bin");
}

}  // namespace
}  // namespace gridcast
