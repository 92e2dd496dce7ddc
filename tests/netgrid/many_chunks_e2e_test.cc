// A payload of more chunks than a plan could have before (issue 52): 2^24 + 2^20 chunks of
// 1 KiB (17 GiB), pushed over a netgrid of two members, run to the end and verified, with the
// receiver killed (SIGKILL) about a third of the way and started again: it resumes from what
// it had verified rather than from the start, in memory that holds bits per chunk and no lists
// (its peak under 96 MiB). Every chunk costs the daemons tens of microseconds whatever its
// size, so this runs for about a quarter of an hour: label `long`, which deploy/run-tests
// leaves out (README).
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "cluster/control_client.h"
#include "tests/netgrid/netgrid_send_fixture.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunkBytes = 1024;
constexpr uint64_t kChunks = (uint64_t{1} << 24) + (uint64_t{1} << 20);
constexpr uint64_t kPayloadBytes = kChunks * kChunkBytes;
constexpr uint64_t kPeakResidentLimit = uint64_t{96} << 20;

const char* const kTopology = R"(name: many-chunks-e2e
switches:
  - name: core
nodes:
  - switch: core
    count: 2
    up: 10gbit
    down: 10gbit
)";

class ManyChunksE2ETest : public NetgridSendFixture {
 protected:
  ManyChunksE2ETest() : NetgridSendFixture("/tmp/gridcast-many-chunks-e2e", kTopology, uint64_t{64} << 30) {}

  void SetUp() override {
    NetgridSendFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Result<ClusterConfig> cluster = Cluster();
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = *cluster;
  }

  // How many chunks `member` holds verified of payload `name` (0 while it has none).
  uint64_t VerifiedChunks(const std::string& member, const std::string& name) const {
    const ClusterMember* m = cluster_.Find(member);
    if (m == nullptr) return 0;
    v1::ChunkMapRequest request;
    request.set_name(name);
    v1::ChunkMapResponse map;
    if (!ControlClient(m->control_address, cluster_.secret).ChunkMap(request, &map).ok()) return 0;
    if (map.complete()) return kChunks;
    uint64_t count = 0;
    for (char byte : map.verified()) count += static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(byte)));
    return count;
  }

  ClusterConfig cluster_;
};

TEST_F(ManyChunksE2ETest, MoreThanTwoToTheTwentyFourChunksRunToTheEndThroughARestart) {
  // Every chunk different: its index in its first 8 bytes, a pseudo-random word after it.
  const fs::path payload = ng_ / "payloads" / "many.bin";
  {
    std::ofstream out(payload, std::ios::binary);
    std::mt19937_64 random(24);
    std::vector<uint64_t> block((uint64_t{64} << 20) / 8, 0);
    const uint64_t words_per_chunk = kChunkBytes / 8;
    for (uint64_t first = 0; first < kChunks; first += block.size() / words_per_chunk) {
      for (uint64_t i = 0; i < block.size(); i += words_per_chunk) {
        block[i] = first + i / words_per_chunk;
        block[i + 1] = random();
      }
      out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(block.size() * 8));
    }
    ASSERT_TRUE(out.good());
  }
  ASSERT_EQ(fs::file_size(payload), kPayloadBytes);

  std::future<Sent> send = StartSend(payload, "many.bin", {"--digest", "xxh3", "--algo", "chain", "--chunk", "1KiB"});

  // A third of the way, the receiver is killed and started again as the netgrid started it.
  const NetgridNode& receiver = Node("core-1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(20);
  uint64_t before_kill = 0;
  while (std::chrono::steady_clock::now() < deadline &&
         send.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    before_kill = VerifiedChunks("core-1", "many.bin");
    if (before_kill > kChunks / 3) break;
  }
  ASSERT_GT(before_kill, kChunks / 3) << "the receiver did not reach a third of the chunks in 20 minutes";
  const std::vector<int> pids = NetgridNodePids(receiver, "gridcastd");
  ASSERT_EQ(pids.size(), 1u);
  std::ifstream cmdline_file("/proc/" + std::to_string(pids[0]) + "/cmdline");
  std::string cmdline((std::istreambuf_iterator<char>(cmdline_file)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  for (size_t at = 0; at < cmdline.size();) {
    const size_t end = cmdline.find('\0', at);
    argv.push_back(cmdline.substr(at, end - at));
    at = end == std::string::npos ? cmdline.size() : end + 1;
  }
  ASSERT_GE(argv.size(), 3u) << cmdline;
  SignalNetgridNode(receiver, SIGKILL);
  for (int i = 0; i < 100 && !NetgridNodePids(receiver, "gridcastd").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(NetgridNodePids(receiver, "gridcastd").empty());
  // In the node's namespace again, with the arguments netgrid gave it.
  Result<int> restarted = SpawnDetached(NetgridExecArgv(receiver, argv), (ng_ / "logs" / "core-1-restarted.log").string());
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();

  ASSERT_EQ(send.wait_for(std::chrono::minutes(40)), std::future_status::ready) << "the send did not end";
  const Sent sent = send.get();
  // Bits per chunk and bounded windows, no lists: 20 bytes a chunk would be 340 MiB.
  const std::vector<int> receiver_pids = NetgridNodePids(receiver, "gridcastd");
  ASSERT_EQ(receiver_pids.size(), 1u);
  const uint64_t peak = ProcessMemoryBytes(receiver_pids[0], "VmHWM");
  std::printf("the restarted receiver's peak resident memory: %.1f MiB\n", static_cast<double>(peak) / (1 << 20));
  EXPECT_LT(peak, kPeakResidentLimit);
  ExpectEveryCopy(sent);
  // It resumed: the restarted daemon was prepared again with what it had verified to check
  // ("prepared plan ... (many.bin, BYTES bytes, H of N chunks held, C verified before to check; ...").
  std::ifstream restarted_log(ng_ / "logs" / "core-1-restarted.log");
  std::stringstream text;
  text << restarted_log.rdbuf();
  const std::string log = text.str();
  const size_t prepared = log.find("prepared plan ");
  ASSERT_NE(prepared, std::string::npos) << log.substr(0, 4000);
  const size_t to_check = log.find(" verified before to check", prepared);
  ASSERT_NE(to_check, std::string::npos) << log.substr(prepared, 400);
  const size_t number = log.rfind(' ', to_check - 1) + 1;
  EXPECT_GE(std::stoull(log.substr(number, to_check - number)), before_kill) << log.substr(prepared, 400);
  std::printf("verified before the kill: %lu of %lu chunks; the send took %.0f s\n",
              static_cast<unsigned long>(before_kill), static_cast<unsigned long>(kChunks), sent.seconds);
  // The copy is the payload, byte for byte.
  const Result<CommandOutput> same = RunCommand({"cmp", payload.string(), (DataDir("core-1") / "many.bin").string()});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->exit_code, 0) << same->output;
}

}  // namespace
}  // namespace gridcast
