// Standard BitTorrent clients fetch a payload the daemons hold (issue 5, interop). A netgrid of
// four 200mbit nodes: gridcastd on three, the fourth is the client's own namespace. A 64 MiB
// payload is broadcast to the daemons; `gridcast torrent export` writes its .torrent, the client
// listens, `gridcast serve-to` makes a receiving member dial it, and the client's copy must be
// byte-identical. Prints how long aria2c took (the number docs/daemon.md quotes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collectives/topology.h"
#include "deploy/netgrid.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kTestDir = "/tmp/gridcast-interop-e2e";

constexpr const char* kTopology = R"(name: interop-e2e
switches:
  - name: core
nodes:
  - switch: core
    count: 4
    up: 200mbit
    down: 200mbit
)";

constexpr const char* kClient = "core-3";  // no daemon: the outside client's namespace
constexpr uint64_t kSizeBytes = 64u << 20;
constexpr double kBoundS = 8.0 * kSizeBytes / 200e6;  // one 200mbit link
constexpr const char* kPayload = "interop.bin";

bool Installed(const std::string& program) {
  Result<CommandOutput> which = RunCommand({"sh", "-c", "command -v " + program});
  return which.ok() && which->exit_code == 0;
}

bool SameBytes(const fs::path& a, const fs::path& b) {
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  if (!x || !y || fs::file_size(a) != fs::file_size(b)) return false;
  std::vector<char> bx(1 << 20), by(1 << 20);
  while (x && y) {
    x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
    y.read(by.data(), static_cast<std::streamsize>(by.size()));
    if (x.gcount() != y.gcount() || !std::equal(bx.begin(), bx.begin() + x.gcount(), by.begin())) return false;
  }
  return true;
}

class InteropE2ETest : public ::testing::Test {
 protected:
  // One netgrid and one broadcast for every test (about 10 s to set up).
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    const fs::path dir = kTestDir;
    const fs::path state_dir = dir / "state";
    // A fixed place: a run killed before its end is cleaned up by the next one and by the
    // ctest cleanup fixture.
    if (!NetgridDown(state_dir).ok()) return Fail("netgrid down failed");
    fs::remove_all(dir);
    fs::create_directories(dir);
    Result<NetworkModel> model = ParseTopology(kTopology);
    if (!model.ok()) return Fail(model.status().ToString());
    Result<NetgridState> state = NetgridUp(*model, state_dir);
    if (!state.ok()) return Fail(state.status().ToString());
    up_ = true;
    client_ = *state->FindNode(kClient);
    NetgridState daemons = *state;
    std::erase_if(daemons.nodes, [](const NetgridNode& n) { return n.name == kClient; });
    Result<std::string> cluster = StartNetgridDaemons(*model, daemons, state_dir, {GRIDCASTD, 7701, {}});
    if (!cluster.ok()) return Fail(cluster.status().ToString());
    cluster_ = *cluster;
    source_payload_ = state_dir / "payloads" / kPayload;
    WritePayload(source_payload_);
    Result<CommandOutput> sent = RunCommand({GRIDCAST_CLI, "send", source_payload_.string(), "--cluster", cluster_});
    if (!sent.ok() || sent->exit_code != 0) return Fail("broadcast failed:\n" + (sent.ok() ? sent->output : ""));
    // The source read it from the send root; the receivers hold it in their data directories.
    Result<CommandOutput> exported = RunCommand({GRIDCAST_CLI, "torrent", "export", kPayload, "-o",
                                                 (dir / "interop.torrent").string(), "--cluster", cluster_});
    if (!exported.ok() || exported->exit_code != 0) {
      return Fail("torrent export failed:\n" + (exported.ok() ? exported->output : ""));
    }
    export_output_ = exported->output;
  }

  static void TearDownTestSuite() {
    if (!up_) return;
    EXPECT_TRUE(NetgridDown(fs::path(kTestDir) / "state").ok());
    Result<std::vector<std::string>> left = ListNetgridNamespaces(NetgridPrefix(fs::path(kTestDir) / "state"));
    EXPECT_TRUE(left.ok() && left->empty()) << "namespaces left behind";
    fs::remove_all(kTestDir);
    up_ = false;
  }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "netgrid needs root (network namespaces); not root";
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  static void Fail(const std::string& error) { setup_error_ = error; }

  static void WritePayload(const fs::path& path) {
    std::ofstream out(path, std::ios::binary);
    uint64_t x = 0x2545f4914f6cdd1dull;
    std::vector<char> buffer(1 << 16);
    for (uint64_t done = 0; done < kSizeBytes; done += buffer.size()) {
      for (char& c : buffer) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<char>(x);
      }
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    }
  }

  static fs::path Dir() { return kTestDir; }

  // Runs `gridcast serve-to` against the client at `port`; returns its output.
  static CommandOutput ServeTo(int port) {
    Result<CommandOutput> served =
        RunCommand({GRIDCAST_CLI, "serve-to", client_.address + ":" + std::to_string(port), kPayload,
                    "--cluster", cluster_, "--timeout", "150"});
    EXPECT_TRUE(served.ok());
    return served.ok() ? *served : CommandOutput{};
  }

  static inline bool up_ = false;
  static inline std::string setup_error_;
  static inline NetgridNode client_;
  static inline std::string cluster_;
  static inline fs::path source_payload_;
  static inline std::string export_output_;
};

TEST_F(InteropE2ETest, Aria2cDownloadsAByteIdenticalCopy) {
  EXPECT_NE(export_output_.find("magnet:?xt=urn:btih:"), std::string::npos) << export_output_;
  if (!Installed("aria2c")) GTEST_SKIP() << "aria2c is not installed";
  const fs::path out = Dir() / "aria2c";
  fs::create_directories(out);
  // aria2c ignores a magnet link's x.pe hint and there is no tracker: it listens and waits.
  // --stop bounds it if the daemon never comes.
  Result<ChildProcess> aria2c = ChildProcess::Start(
      NetgridExecArgv(client_, {"aria2c", "--enable-dht=false", "--bt-enable-lpd=false",
                                "--enable-peer-exchange=false", "--listen-port=6881", "--seed-time=0",
                                "--bt-seed-unverified", "--file-allocation=none", "--summary-interval=0",
                                "--stop=180", "-d", out.string(), (Dir() / "interop.torrent").string()}),
      (Dir() / "aria2c.log").string());
  ASSERT_TRUE(aria2c.ok()) << aria2c.status().ToString();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // listening; the daemon redials anyway
  const Clock::time_point start = Clock::now();
  const CommandOutput served = ServeTo(6881);
  EXPECT_EQ(served.exit_code, 0) << served.output;
  EXPECT_EQ(aria2c->Wait(), 0) << "aria2c failed; see " << (Dir() / "aria2c.log");
  const double took_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("aria2c: 64 MiB in %.2f s from serve-to to aria2c's exit (one 200mbit link: bound %.2f s, "
              "ratio %.2f)\n%s", took_s, kBoundS, took_s / kBoundS, served.output.c_str());
  EXPECT_TRUE(SameBytes(out / kPayload, source_payload_)) << "aria2c's copy differs";
}

// transmission-cli 3.00 ramps its request queue up slowly (tens of seconds for 64 MiB here)
// and batches its HAVE messages, so the daemon knows it is done when it has been sent every
// block and loses interest. It never exits on its own: stopped once served.
TEST_F(InteropE2ETest, TransmissionDownloadsAByteIdenticalCopy) {
  if (!Installed("transmission-cli")) GTEST_SKIP() << "transmission-cli is not installed";
  const fs::path out = Dir() / "transmission";
  const fs::path config = Dir() / "transmission-config";
  fs::create_directories(out);
  fs::create_directories(config);
  std::ofstream(config / "settings.json") << R"({"dht-enabled": false, "lpd-enabled": false,
    "pex-enabled": false, "utp-enabled": false, "port-forwarding-enabled": false})";
  Result<ChildProcess> transmission = ChildProcess::Start(
      NetgridExecArgv(client_, {"transmission-cli", "-g", config.string(), "-p", "51413", "-M", "-w",
                                out.string(), (Dir() / "interop.torrent").string()}),
      (Dir() / "transmission.log").string());
  ASSERT_TRUE(transmission.ok()) << transmission.status().ToString();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const Clock::time_point start = Clock::now();
  const CommandOutput served = ServeTo(51413);
  EXPECT_EQ(served.exit_code, 0) << served.output;
  transmission->Stop(SIGINT);  // it flushes what it holds and exits
  std::printf("transmission-cli: 64 MiB in %.2f s\n%s",
              std::chrono::duration<double>(Clock::now() - start).count(), served.output.c_str());
  EXPECT_TRUE(SameBytes(out / kPayload, source_payload_)) << "transmission's copy differs";
}

// A client that starts listening after serve-to began is reached: the daemon redials.
TEST_F(InteropE2ETest, ServeToRedialsAClientThatListensLate) {
  if (!Installed("aria2c")) GTEST_SKIP() << "aria2c is not installed";
  const fs::path out = Dir() / "late";
  fs::create_directories(out);
  Result<ChildProcess> serve = ChildProcess::Start(
      {GRIDCAST_CLI, "serve-to", client_.address + ":6882", kPayload, "--cluster", cluster_, "--timeout", "150"},
      (Dir() / "late-serve.log").string());
  ASSERT_TRUE(serve.ok());
  std::this_thread::sleep_for(std::chrono::seconds(3));
  Result<ChildProcess> aria2c = ChildProcess::Start(
      NetgridExecArgv(client_, {"aria2c", "--enable-dht=false", "--bt-enable-lpd=false",
                                "--enable-peer-exchange=false", "--listen-port=6882", "--seed-time=0",
                                "--file-allocation=none", "--stop=180", "-d", out.string(),
                                (Dir() / "interop.torrent").string()}),
      (Dir() / "late-aria2c.log").string());
  ASSERT_TRUE(aria2c.ok());
  EXPECT_EQ(serve->Wait(), 0) << "see " << (Dir() / "late-serve.log");
  EXPECT_EQ(aria2c->Wait(), 0) << "see " << (Dir() / "late-aria2c.log");
  EXPECT_TRUE(SameBytes(out / kPayload, source_payload_));
}

}  // namespace
}  // namespace gridcast
