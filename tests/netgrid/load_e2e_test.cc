// Load on one netgrid (8 nodes on one switch, 50mbit NICs: 400 mbit in all, within what this
// host carries): 20 broadcasts of different payloads from four sources at once; two sends of
// the same payload at once; two different payloads under one name at once; a flood of
// control calls at a source and a member that stops reading, each while another broadcast
// runs. Everything sent is verified, no broadcast is starved, and each daemon's peak memory
// is reported and bounded.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cluster/control_client.h"
#include "netgrid_send_fixture.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

using namespace std::chrono_literals;

constexpr const char* kTopology = R"(name: load-e2e
switches:
  - name: core
nodes:
  - switch: core
    count: 8
    up: 50mbit
    down: 50mbit
)";

class LoadE2ETest : public NetgridSendFixture {
 protected:
  LoadE2ETest() : NetgridSendFixture("/tmp/gridcast-load-e2e", kTopology) {}

  // The gridcastd of every node, by node name.
  std::map<std::string, int> DaemonPids() const {
    std::map<std::string, int> pids;
    for (const NetgridNode& node : state_.nodes) {
      Result<CommandOutput> out = RunCommand({"ip", "netns", "pids", node.netns});
      if (out.ok() && out->exit_code == 0) pids[node.name] = std::atoi(out->output.c_str());
    }
    return pids;
  }

  // Prints each daemon's peak memory and checks it against `limit_mib`.
  void ReportPeakMemory(double limit_mib) const {
    for (const auto& [name, pid] : DaemonPids()) {
      const double peak = static_cast<double>(ProcessMemoryBytes(pid, "VmHWM")) / (1 << 20);
      std::printf("peak memory of %s's gridcastd: %.1f MiB\n", name.c_str(), peak);
      EXPECT_GT(peak, 0) << name;
      EXPECT_LT(peak, limit_mib) << name;
    }
  }

  std::string CopyDigest(const std::string& member, const std::string& name) const {
    return FileSha256(ng_ / "data" / member / name);
  }
};

// Under AddressSanitizer a daemon holds far more (shadow memory, quarantine).
#if defined(__SANITIZE_ADDRESS__)
constexpr double kPeakLimitMiB = 1024;
#else
constexpr double kPeakLimitMiB = 160;
#endif

TEST_F(LoadE2ETest, TwentyBroadcastsFromFourSourcesAtOnceAreAllVerified) {
  std::vector<fs::path> payloads;
  std::vector<std::future<Sent>> sends;
  for (int i = 0; i < 20; ++i) {
    const std::string name = "load-" + std::to_string(i) + ".bin";
    payloads.push_back(MakePayload(name, (1u << 20) + 4096u * static_cast<unsigned>(i), 100 + i));
    const std::string source = "core-" + std::to_string(i % 4);
    sends.push_back(StartSend(payloads.back(), name, {"--source", source, "--algo", "auto", "--timeout", "240"}));
  }
  std::set<std::string> plan_ids;
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE("load-" + std::to_string(i));
    const Sent sent = sends[i].get();
    ExpectEveryCopy(sent);
    if (sent.summary.is_object()) plan_ids.insert(sent.summary["plan_id"].get<std::string>());
    for (const NetgridNode& node : state_.nodes) {
      if (node.name == "core-" + std::to_string(i % 4)) continue;
      EXPECT_EQ(CopyDigest(node.name, payloads[i].filename().string()), FileSha256(payloads[i])) << node.name;
    }
  }
  EXPECT_EQ(plan_ids.size(), 20u);
  ReportPeakMemory(kPeakLimitMiB);
}

// The second request joins the first broadcast: one plan, both verified.
TEST_F(LoadE2ETest, TwoSendsOfTheSamePayloadAtOnceShareOneBroadcast) {
  const fs::path payload = MakePayload("twice.bin", 8 << 20, 7);
  std::future<Sent> first = StartSend(payload, "twice.bin", {"--algo", "auto"});
  std::this_thread::sleep_for(300ms);
  std::future<Sent> second = StartSend(payload, "twice.bin", {"--algo", "auto"});
  const Sent a = first.get();
  const Sent b = second.get();
  ExpectEveryCopy(a);
  ExpectEveryCopy(b);
  ASSERT_TRUE(a.summary.is_object() && b.summary.is_object());
  EXPECT_EQ(a.summary["plan_id"], b.summary["plan_id"]);
}

// Two different payloads under one name from two sources at once: a member never takes two
// plans for one file. A broadcast that lost the race fails naming the other; whatever
// finished is what every member holds, and a send afterwards succeeds.
TEST_F(LoadE2ETest, TwoPayloadsUnderOneNameAtOnceNeverMixInOneFile) {
  const fs::path a = MakePayload("a.bin", 4 << 20, 1);
  const fs::path b = MakePayload("b.bin", 4 << 20, 2);
  std::future<Sent> from_a = StartSend(a, "same.bin", {"--source", "core-0", "--algo", "auto"});
  std::future<Sent> from_b = StartSend(b, "same.bin", {"--source", "core-1", "--algo", "auto"});
  const Sent sa = from_a.get();
  const Sent sb = from_b.get();
  EXPECT_FALSE(sa.exit_code == 0 && sb.exit_code == 0) << "both succeeded:\n" << sa.output << sb.output;
  for (const Sent* s : {&sa, &sb}) {
    std::printf("%s: exit %d%s\n", s == &sa ? "a.bin from core-0" : "b.bin from core-1", s->exit_code,
                s->summary.is_object() && s->summary.contains("error")
                    ? (", " + s->summary["error"].get<std::string>()).c_str() : "");
    if (s->exit_code != 0) {
      EXPECT_NE(s->output.find("is being received here by broadcast"), std::string::npos) << s->output;
    }
  }
  const Sent* winner = sa.exit_code == 0 ? &sa : sb.exit_code == 0 ? &sb : nullptr;
  if (winner != nullptr) {
    const std::string expected = FileSha256(winner == &sa ? a : b);
    for (const NetgridNode& node : state_.nodes) {
      if (node.name == (winner == &sa ? "core-0" : "core-1")) continue;
      EXPECT_EQ(CopyDigest(node.name, "same.bin"), expected) << node.name;
    }
  }
  const Sent again = StartSend(b, "same.bin", {"--source", "core-1", "--algo", "auto"}).get();
  ExpectEveryCopy(again);
  for (const NetgridNode& node : state_.nodes) {
    if (node.name != "core-1") {
      EXPECT_EQ(CopyDigest(node.name, "same.bin"), FileSha256(b)) << node.name;
    }
  }
}

// While one broadcast runs, four threads call the source's Status as fast as they can (on a
// 2-core host they compete with the daemons for the cores too); the broadcast still finishes
// within twice its unloaded time.
TEST_F(LoadE2ETest, AFloodOfControlCallsDoesNotStarveABroadcast) {
  const fs::path payload = MakePayload("flood.bin", 16 << 20, 3);
  const Sent quiet = StartSend(payload, "quiet.bin", {"--algo", "auto"}).get();
  ExpectEveryCopy(quiet);

  Result<ClusterConfig> cluster = Cluster();
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  const ClusterMember* source = cluster->Find("core-0");
  ASSERT_NE(source, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> calls{0};
  std::vector<std::thread> flood;
  for (int t = 0; t < 4; ++t) {
    flood.emplace_back([&] {
      ControlClient client(source->control_address, cluster->secret);
      while (!stop) {
        v1::StatusResponse response;
        if (client.GetStatus(v1::StatusRequest{}, &response).ok()) ++calls;
      }
    });
  }
  const Sent loaded = StartSend(payload, "flooded.bin", {"--algo", "auto"}).get();
  stop = true;
  for (std::thread& t : flood) t.join();
  ExpectEveryCopy(loaded);
  std::printf("unloaded %.2f s, under %llu Status calls %.2f s\n", quiet.summary["completion_s"].get<double>(),
              static_cast<unsigned long long>(calls.load()), loaded.summary["completion_s"].get<double>());
  EXPECT_GT(calls.load(), 100u);
  EXPECT_LT(loaded.summary["completion_s"].get<double>(), 2 * quiet.summary["completion_s"].get<double>());
}

// A member that stops reading (its daemon paused) holds up the broadcasts it is part of, not
// the others: a broadcast to the other members, started meanwhile from the same source,
// finishes while the first waits (sharing the source's uplink with what the first still
// sends to the members not cut off, so within a few times its unloaded time).
TEST_F(LoadE2ETest, AMemberThatStopsReadingDoesNotStarveOtherBroadcasts) {
  const fs::path stuck = MakePayload("stuck.bin", 16 << 20, 4);
  const fs::path other = MakePayload("other.bin", 8 << 20, 5);
  const std::string others = "core-1,core-2,core-3,core-4,core-5,core-6";
  const Sent quiet = StartSend(other, "quiet.bin", {"--to", others, "--algo", "auto"}).get();
  ExpectEveryCopy(quiet);

  std::future<Sent> held_up = StartSend(stuck, "stuck.bin", {"--algo", "auto", "--stall-timeout", "30"});
  std::this_thread::sleep_for(1s);
  SignalNetgridNode(Node("core-7"), SIGSTOP);
  const Sent free = StartSend(other, "other.bin", {"--to", others, "--algo", "auto"}).get();
  SignalNetgridNode(Node("core-7"), SIGCONT);
  ExpectEveryCopy(free);
  std::printf("to the others: unloaded %.2f s, beside the held-up broadcast %.2f s\n",
              quiet.summary["completion_s"].get<double>(), free.summary["completion_s"].get<double>());
  EXPECT_LT(free.summary["completion_s"].get<double>(), 4 * quiet.summary["completion_s"].get<double>())
      << "unloaded: " << quiet.summary["completion_s"];
  EXPECT_EQ(held_up.wait_for(0s), std::future_status::timeout) << "the paused member did not hold up its broadcast";
  // Continued, the paused member catches up: the first broadcast ends verified too.
  ExpectEveryCopy(held_up.get());
}

}  // namespace
}  // namespace gridcast
