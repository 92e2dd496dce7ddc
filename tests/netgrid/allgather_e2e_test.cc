// gridcast allgather on a netgrid of 5 nodes (not a power of two, 100mbit): every all-to-all
// planner gathers parts of awkward sizes (an empty one among them) at every member, each copy
// compared byte for byte; in memory the bundle holds each part where the summary says; bad
// requests are refused with the problem named; a member killed mid-allgather fails it with a
// non-zero exit naming that member, never a hang.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "netgrid_send_fixture.h"

namespace gridcast {
namespace {

using namespace std::chrono_literals;

constexpr const char* kState = "/tmp/gridcast-allgather-e2e";
constexpr const char* kTopology = R"(name: allgather-e2e
switches:
  - name: core
nodes:
  - switch: core
    count: 5
    up: 100mbit
    down: 100mbit
)";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class AllgatherE2ETest : public NetgridSendFixture {
 protected:
  AllgatherE2ETest() : NetgridSendFixture(kState, kTopology) {}

  // Writes `bytes` pseudo-random bytes as `file` in the member's data directory.
  void WritePart(const std::string& member, const std::string& file, uint64_t bytes, uint64_t seed) {
    const fs::path made = MakePayload(member + "-" + file, bytes, seed);
    fs::rename(made, DataDir(member) / file);
    parts_[member] = ReadFile(DataDir(member) / file);
  }

  std::vector<std::string> PartArgs(const std::string& file) const {
    std::vector<std::string> args;
    for (const auto& [member, bytes] : parts_) args.insert(args.end(), {"--part", member + "=" + file});
    return args;
  }

  Sent Allgather(const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"allgather", "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    return StartCommand(std::move(args)).get();
  }

  // Every member holds NAME/<member> equal to that member's part, for every part.
  void ExpectEveryPartEverywhere(const std::string& name) {
    for (const NetgridNode& node : state_.nodes) {
      for (const auto& [member, bytes] : parts_) {
        const fs::path copy = DataDir(node.name) / name / member;
        ASSERT_TRUE(fs::exists(copy)) << copy;
        EXPECT_TRUE(ReadFile(copy) == bytes) << copy << " differs from " << member << "'s part";
      }
      EXPECT_FALSE(fs::exists(DataDir(node.name) / (name + ".allgather"))) << "the bundle stays at " << node.name;
    }
  }

  std::map<std::string, std::string> parts_;  // member -> its part's bytes
};

TEST_F(AllgatherE2ETest, EveryPlannerGathersEveryPartAtEveryMember) {
  // One chunk and a byte, an empty part, one byte short of two chunks, a byte, 300 KiB odd.
  const std::vector<uint64_t> sizes = {(64 << 10) + 1, 0, (128 << 10) - 1, 1, 300'007};
  for (size_t i = 0; i < state_.nodes.size(); ++i) WritePart(state_.nodes[i].name, "part.bin", sizes[i], 40 + i);
  for (const std::string algo : {"ring", "prefix-send", "kprefix:2", "kshift:2", "mesh2d", "hypercube", "auto"}) {
    std::vector<std::string> args = PartArgs("part.bin");
    args.insert(args.end(), {"--algo", algo, "--chunk", "64KiB"});
    const Sent sent = Allgather("gathered", args);
    ExpectEveryCopy(sent);
    ASSERT_TRUE(sent.summary.is_object());
    EXPECT_EQ(sent.summary["members"].size(), state_.nodes.size()) << algo;
    EXPECT_EQ(sent.summary["parts"].size(), state_.nodes.size()) << algo;
    if (algo != "auto") {
      EXPECT_EQ(sent.summary["algorithm"], algo);
    }
    ExpectEveryPartEverywhere("gathered");
    if (HasFailure()) return;
  }
}

TEST_F(AllgatherE2ETest, InMemoryTheBundleHoldsEachPartWhereTheSummarySays) {
  for (size_t i = 0; i < state_.nodes.size(); ++i) WritePart(state_.nodes[i].name, "p.bin", 100'000 + 3 * i, 50 + i);
  // Through the last member, whose part comes last in the bundle.
  std::vector<std::string> args = PartArgs("p.bin");
  args.insert(args.end(), {"--in-memory", "--via", state_.nodes.back().name});
  const Sent sent = Allgather("gathered-in-memory", args);
  ExpectEveryCopy(sent);
  ASSERT_TRUE(sent.summary.is_object());
  const fs::path memory = NetgridMemoryRoot(state_.prefix);
  for (const NetgridNode& node : state_.nodes) {
    const std::string bundle = ReadFile(memory / node.name / "gathered-in-memory");
    for (const auto& part : sent.summary["parts"]) {
      const std::string& bytes = parts_.at(part["member"].get<std::string>());
      ASSERT_EQ(part["size_bytes"].get<uint64_t>(), bytes.size());
      const uint64_t offset = part["offset"].get<uint64_t>();
      ASSERT_LE(offset + bytes.size(), bundle.size()) << node.name;
      EXPECT_TRUE(bundle.compare(offset, bytes.size(), bytes) == 0) << node.name << " " << part.dump();
    }
  }
}

TEST_F(AllgatherE2ETest, BadRequestsAreRefusedWithTheProblemNamed) {
  const std::string a = state_.nodes[0].name, b = state_.nodes[1].name;
  WritePart(a, "ok.bin", 1000, 1);
  WritePart(b, "ok.bin", 1000, 2);
  auto refused = [&](std::vector<std::string> args, const std::string& says) {
    const Sent sent = Allgather("refused", std::move(args));
    EXPECT_NE(sent.exit_code, 0) << sent.output;
    ASSERT_TRUE(sent.summary.is_object()) << sent.output;
    EXPECT_NE(sent.summary.value("error", "").find(says), std::string::npos) << sent.output;
  };
  refused({"--part", a + "=ok.bin", "--part", b + "=../../../../etc/passwd"}, "outside the data directory");
  refused({"--part", a + "=ok.bin", "--part", b + "=missing.bin"}, "missing.bin");
  refused({"--part", a + "=ok.bin", "--part", a + "=ok.bin"}, "two parts");
  refused({"--part", a + "=ok.bin", "--part", b + "=ok.bin", "--via", state_.nodes[2].name}, "holds no part");
  refused({"--part", a + "=ok.bin", "--part", b + "=ok.bin", "--algo", "multilane"}, "not an all-to-all planner");
  for (const NetgridNode& node : state_.nodes) EXPECT_FALSE(fs::exists(DataDir(node.name) / "refused"));
}

TEST_F(AllgatherE2ETest, AMemberKilledMidAllgatherFailsItNamingTheMember) {
  // 5 x 6 MiB: each member receives 24 MiB, about 2 s at 100mbit.
  for (size_t i = 0; i < state_.nodes.size(); ++i) WritePart(state_.nodes[i].name, "big.bin", 6 << 20, 60 + i);
  std::vector<std::string> args = PartArgs("big.bin");
  args.insert(args.end(), {"--algo", "ring", "--stall-timeout", "5"});
  args.insert(args.begin(), {"allgather", "--name", "killed"});
  std::future<Sent> running = StartCommand(args);
  std::this_thread::sleep_for(700ms);
  const NetgridNode& victim = state_.nodes[2];
  SignalNetgridNode(victim, SIGKILL);
  ASSERT_EQ(running.wait_for(60s), std::future_status::ready) << "the allgather hangs";
  const Sent sent = running.get();
  EXPECT_NE(sent.exit_code, 0) << sent.output;
  ASSERT_TRUE(sent.summary.is_object()) << sent.output;
  EXPECT_FALSE(sent.summary["verified"].get<bool>());
  EXPECT_NE(sent.summary.value("error", "").find(victim.name), std::string::npos) << sent.output;
  for (const NetgridNode& node : state_.nodes) EXPECT_FALSE(fs::exists(DataDir(node.name) / "killed")) << node.name;
}

}  // namespace
}  // namespace gridcast
