// `gridcast bench` end to end on a 4-node, 2-switch netgrid: the --json line has exactly the
// documented keys, a verified push and the receivers' CPU per GiB; SIGINT in the middle of a run leaves no namespace,
// daemon or state directory behind; MPI_Bcast runs across the namespaces (when built with MPI);
// sbcast and gridcast slurm stage run on a real Slurm.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "deploy/netgrid.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTestDir = "/tmp/gridcast-bench-e2e";
constexpr const char* kStates[] = {"push", "interrupt", "mpi", "sbcast", "stage", "upload-bound"};

constexpr const char* kTopology = R"(name: bench-e2e
switches:
  - name: left
  - name: right
    parent: left
    uplink: 100mbit
nodes:
  - switch: left
    count: 2
    up: 100mbit
    down: 100mbit
  - switch: right
    count: 2
    up: 100mbit
    down: 100mbit
)";

// Upload-bound (issue 35): the right site's members upload a quarter of what the left's do, so
// the left site serves part of the right one across the uplink, and upload-packing's lanes give
// members several parents.
constexpr const char* kUploadBoundTopology = R"(name: upload-bound-e2e
switches:
  - name: left
  - name: right
    parent: left
    uplink: 40mbit
nodes:
  - switch: left
    count: 5
    up: 20mbit
    down: 40mbit
  - switch: right
    count: 5
    up: 5mbit
    down: 40mbit
)";

constexpr uint64_t kSizeBytes = 8u << 20;
constexpr double kBoundS = 8.0 * kSizeBytes / 100e6;  // the source's 100mbit upload

class BenchE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "gridcast bench needs root (network namespaces); not root";
    // Fixed places, so a run killed before its end is cleaned up by the next one and by the
    // ctest cleanup fixture.
    for (const char* state : kStates) {
      ASSERT_TRUE(NetgridDown(dir_ / state).ok());
      fs::remove_all(dir_ / state);
    }
    fs::create_directories(dir_);
    std::ofstream(dir_ / "topology.yaml") << kTopology;
  }

  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> BenchArgv(const std::string& mode, const std::string& state, uint64_t size_bytes) {
    return {GRIDCAST_CLI, "bench", "--topology", (dir_ / "topology.yaml").string(), "--size",
            std::to_string(size_bytes), "--mode", mode, "--state", (dir_ / state).string(), "--json"};
  }

  // Runs the benchmark, checks that it cleaned up, and returns its JSON line.
  nlohmann::json RunBench(const std::string& mode, const std::string& state) {
    Result<CommandOutput> out = RunCommand(BenchArgv(mode, state, kSizeBytes));
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return nullptr;
    EXPECT_EQ(out->exit_code, 0) << out->output;
    ExpectNothingLeft(state);
    const std::string& text = out->output;
    const size_t line = text.rfind("{\"mode\"");
    EXPECT_NE(line, std::string::npos) << text;
    return line == std::string::npos ? nullptr : nlohmann::json::parse(text.substr(line), nullptr, false);
  }

  void ExpectNothingLeft(const std::string& state) {
    Result<std::vector<std::string>> left = ListNetgridNamespaces(NetgridPrefix(dir_ / state));
    ASSERT_TRUE(left.ok());
    EXPECT_TRUE(left->empty()) << left->size() << " namespaces left behind";
    EXPECT_FALSE(fs::exists(dir_ / state)) << "state directory left behind";
  }

  static void ExpectResultLine(const nlohmann::json& result, const std::string& mode) {
    ASSERT_TRUE(result.is_object()) << result.dump();
    std::set<std::string> keys;
    for (const auto& item : result.items()) keys.insert(item.key());
    std::set<std::string> expected = {"mode",          "algo",
                                      "size_bytes",    "completion_s",
                                      "bound_s",       "ratio",
                                      "verified",      "cpu_s_per_gib",
                                      "transfer_cpu_s_per_gib", "busiest_thread_cpu_s_per_gib"};
    // gridcast's own modes pass the send summary's control-plane counters and its chunk digest
    // through.
    if (mode != "mpi" && mode != "sbcast") {
      expected.insert("control");
      expected.insert("digest");
      EXPECT_EQ(result["digest"], "sha256") << result.dump();
      ASSERT_TRUE(result["control"].is_object()) << result.dump();
      EXPECT_GT(result["control"]["rpcs_at_source"].get<uint64_t>(), 0u) << result.dump();
      EXPECT_GT(result["control"]["bytes_at_source"].get<uint64_t>(), 0u) << result.dump();
      EXPECT_GT(result["control"]["first_byte_s"].get<double>(), 0) << result.dump();
    }
    // A gridcastd broadcast also says what crossed the network (every byte: nobody held a
    // copy), its whole time from the command's start, and the transfer alone: from the
    // broadcast's start, after the request (completion_s) and before the summary (wall_s).
    if (mode == "push") {
      expected.insert({"moved_bytes", "reused_bytes", "wall_s", "transfer_s", "transfer_ratio", "repairs", "finished_s"});
      EXPECT_EQ(result["repairs"], nlohmann::json::array()) << result.dump();  // nothing failed
      ASSERT_TRUE(result["finished_s"].is_object()) << result.dump();  // each receiver's, from the Start
      EXPECT_FALSE(result["finished_s"].empty()) << result.dump();
      for (const auto& [member, at_s] : result["finished_s"].items()) {
        EXPECT_GT(at_s.get<double>(), 0) << member;
        EXPECT_LE(at_s.get<double>(), result["completion_s"].get<double>()) << member;
      }
      EXPECT_GE(result["moved_bytes"].get<uint64_t>(), kSizeBytes) << result.dump();
      EXPECT_EQ(result["reused_bytes"].get<uint64_t>(), 0u) << result.dump();
      EXPECT_GE(result["wall_s"].get<double>(), result["completion_s"].get<double>()) << result.dump();
      EXPECT_LT(result["transfer_s"].get<double>(), result["completion_s"].get<double>()) << result.dump();
      EXPECT_GT(result["transfer_s"].get<double>(), kBoundS) << result.dump();
      EXPECT_NEAR(result["transfer_ratio"].get<double>(), result["transfer_s"].get<double>() / kBoundS, 1e-5);
      EXPECT_GE(result["control"]["started_s"].get<double>(), 0) << result.dump();
    }
    EXPECT_EQ(keys, expected);
    EXPECT_EQ(result["mode"], mode);
    EXPECT_FALSE(result["algo"].get<std::string>().empty());
    EXPECT_EQ(result["size_bytes"], kSizeBytes);
    EXPECT_EQ(result["verified"], true);
    const double completion_s = result["completion_s"].get<double>();
    const double bound_s = result["bound_s"].get<double>();
    EXPECT_NEAR(bound_s, kBoundS, 1e-5);
    // Nothing beats the bound; TCP through tbf gets about 95.5% of the shaped rate.
    EXPECT_GT(completion_s, bound_s);
    EXPECT_NEAR(result["ratio"].get<double>(), completion_s / bound_s, 1e-5);
    // The receivers' daemons' or ranks' CPU per GiB each received; sbcast's is Slurm's, not measured.
    const nlohmann::json& cpu = result["cpu_s_per_gib"];
    const nlohmann::json& transfer = result["transfer_cpu_s_per_gib"];
    const nlohmann::json& busiest = result["busiest_thread_cpu_s_per_gib"];
    if (mode == "sbcast") {
      EXPECT_TRUE(cpu.is_null()) << result.dump();
      EXPECT_TRUE(transfer.is_null()) << result.dump();
      EXPECT_TRUE(busiest.is_null()) << result.dump();
      return;
    }
    const double max = ExpectCpuPerGib(cpu);
    // One thread of a node: no more than the node's whole (a daemon's thread read in 10 ms
    // clock ticks, rounded at both ends of the window; a rank's main thread to the nanosecond).
    if (mode == "slurm-stage") {
      EXPECT_TRUE(busiest.is_null()) << result.dump();  // its daemons start inside the job
    } else {
      ASSERT_TRUE(busiest.is_object()) << result.dump();
      // A rank's main thread is read to the nanosecond and does MPI's work: never 0.
      if (mode == "mpi") {
        EXPECT_GT(busiest["median"].get<double>(), 0) << result.dump();
      } else {
        EXPECT_GE(busiest["median"].get<double>(), 0) << result.dump();
      }
      EXPECT_GE(busiest["max"].get<double>(), busiest["median"].get<double>()) << result.dump();
      const double tick_per_gib = 0.01 * static_cast<double>(uint64_t{1} << 30) / static_cast<double>(kSizeBytes);
      EXPECT_LE(busiest["max"].get<double>(), max + 2 * tick_per_gib + 1e-6) << result.dump();
    }
    // slurm stage starts the daemons itself: when its broadcast's first byte left is not known.
    if (mode == "slurm-stage") {
      EXPECT_TRUE(transfer.is_null()) << result.dump();
      return;
    }
    // A part of the same window, at every node (20 ms readings interpolated).
    EXPECT_LE(ExpectCpuPerGib(transfer), max * 1.001) << result.dump();
  }

  // Checks a {"median": F, "max": F} of CPU seconds per GiB; returns the max.
  static double ExpectCpuPerGib(const nlohmann::json& cpu) {
    EXPECT_TRUE(cpu.is_object()) << cpu.dump();
    EXPECT_EQ(cpu.size(), 2u) << cpu.dump();
    if (!cpu.is_object() || !cpu["median"].is_number() || !cpu["max"].is_number()) {
      ADD_FAILURE() << cpu.dump();
      return 0;
    }
    const double median = cpu["median"].get<double>();
    const double max = cpu["max"].get<double>();
    EXPECT_TRUE(std::isfinite(median) && std::isfinite(max)) << cpu.dump();
    EXPECT_GT(median, 0) << cpu.dump();
    EXPECT_GE(max, median) << cpu.dump();
    // Receiving 8 MiB costs far less than a CPU-second per MiB, i.e. 1024 per GiB.
    EXPECT_LT(max, 1024) << cpu.dump();
    return max;
  }

  fs::path dir_ = kTestDir;
};

TEST_F(BenchE2ETest, PushPrintsTheDocumentedJsonVerifiedAndCleansUp) {
  ExpectResultLine(RunBench("push", "push"), "push");
}

// --base-change: the base is sent, changed and sent again; the second send is reported, every
// copy verified, beside the base's times, having moved only what changed (a file) or what the
// tree's edits touched (a directory of 1,000 files).
TEST_F(BenchE2ETest, ABaseChangeReportsTheSecondSendBesideTheFirst) {
  for (const char* kind : {"insert", "tree"}) {
    SCOPED_TRACE(kind);
    std::vector<std::string> argv = BenchArgv("push", std::string("change-") + kind, kSizeBytes);
    argv.insert(argv.end(), {"--base-change", kind, "--chunk", "64KiB"});
    Result<CommandOutput> out = RunCommand(argv);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->exit_code, 0) << out->output;
    ExpectNothingLeft(std::string("change-") + kind);
    const size_t line = out->output.rfind("{\"mode\"");
    ASSERT_NE(line, std::string::npos) << out->output;
    const nlohmann::json result = nlohmann::json::parse(out->output.substr(line), nullptr, false);
    ASSERT_TRUE(result.is_object()) << out->output;
    EXPECT_EQ(result["verified"], true) << out->output;
    EXPECT_EQ(result["base_change"], kind);
    EXPECT_EQ(result["base_size_bytes"], kSizeBytes);
    const uint64_t size = result["size_bytes"].get<uint64_t>();
    const uint64_t copies = size * 3;
    // Both times are reported; which is shorter is not checked: at 8 MiB under the sanitizers
    // the time goes to starting up and unpacking, not to moving (the second send of "tree"
    // took 2.0 s beside the base's 1.4 s on a loaded host), and what moved is checked below.
    EXPECT_GT(result["completion_s"].get<double>(), 0) << out->output;
    EXPECT_GT(result["base_completion_s"].get<double>(), 0) << out->output;
    EXPECT_GE(result["base_wall_s"].get<double>(), result["base_completion_s"].get<double>()) << out->output;
    // 8 MiB in 1,000 files is 8 KiB a file: each 64 KiB chunk spans eight of them and their
    // headers, so the thirteen changed files spoil about a tenth of the chunks (8.9%, where
    // directories unpacked with their own times spoiled every directory's header too: a
    // third); one insert spoils one or two.
    const uint64_t most_moved = std::string(kind) == "tree" ? copies * 15 / 100 : copies / 10;
    EXPECT_LT(result["moved_bytes"].get<uint64_t>(), most_moved) << out->output;
    EXPECT_GT(result["reused_bytes"].get<uint64_t>(), copies - most_moved) << out->output;
  }
  // Not for modes that send without gridcastd.
  std::vector<std::string> argv = BenchArgv("mpi", "change-mpi", kSizeBytes);
  argv.insert(argv.end(), {"--base-change", "same"});
  Result<CommandOutput> refused = RunCommand(argv);
  ASSERT_TRUE(refused.ok());
  EXPECT_NE(refused->exit_code, 0);
  EXPECT_NE(refused->output.find("--base-change"), std::string::npos) << refused->output;
}

// The many-lane plans of upload-packing (a member with a parent in every lane, members served
// across the uplink in every lane) run on real daemons and every copy verifies.
TEST_F(BenchE2ETest, UploadPackingOnAnUploadBoundNetworkIsVerified) {
  std::ofstream(dir_ / "upload-bound.yaml") << kUploadBoundTopology;
  Result<CommandOutput> out = RunCommand({GRIDCAST_CLI, "bench", "--topology", (dir_ / "upload-bound.yaml").string(),
                                          "--size", "4MiB", "--mode", "push", "--algo", "upload-packing", "--chunk",
                                          "64KiB", "--state", (dir_ / "upload-bound").string(), "--json"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->exit_code, 0) << out->output;
  ExpectNothingLeft("upload-bound");
  const size_t line = out->output.rfind("{\"mode\"");
  ASSERT_NE(line, std::string::npos) << out->output;
  const nlohmann::json result = nlohmann::json::parse(out->output.substr(line), nullptr, false);
  ASSERT_TRUE(result.is_object()) << out->output;
  EXPECT_EQ(result["algo"], "upload-packing");
  EXPECT_EQ(result["verified"], true) << out->output;
  // The bound is the right site's cut: its 5 copies of 32 Mbit over the uplink's 40mbit and its
  // own members' 25mbit of upload.
  EXPECT_NEAR(result["bound_s"].get<double>(), 5 * 8.0 * (4 << 20) / 65e6, 1e-5);
  EXPECT_GT(result["ratio"].get<double>(), 1.0);
}

TEST_F(BenchE2ETest, InterruptTearsEverythingDown) {
  Result<ChildProcess> bench = ChildProcess::Start(BenchArgv("push", "interrupt", 256u << 20),
                                                   (dir_ / "interrupt.log").string());
  ASSERT_TRUE(bench.ok()) << bench.status().ToString();
  // Interrupt once the daemons serve (the cluster file is written just before they start).
  const fs::path cluster = dir_ / "interrupt" / "cluster.yaml";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(cluster) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(cluster)) << "the benchmark never started its daemons";
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill(bench->pid(), SIGINT);
  EXPECT_EQ(bench->Wait(), 128 + SIGINT);
  ExpectNothingLeft("interrupt");
  // The `gridcast send` client exits on its own once its daemon is gone: allow it a moment.
  Result<CommandOutput> left = RunCommand({"pgrep", "-af", (dir_ / "interrupt").string()});
  for (int attempt = 0; attempt < 50 && left.ok() && left->exit_code == 0; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = RunCommand({"pgrep", "-af", (dir_ / "interrupt").string()});
  }
  ASSERT_TRUE(left.ok());
  EXPECT_NE(left->exit_code, 0) << "processes left behind:\n" << left->output;
}

// A real Slurm on the netgrid: sbcast, and gridcast slurm stage in the same kind of job.
TEST_F(BenchE2ETest, SbcastAndSlurmStageRunOnARealSlurm) {
  Result<CommandOutput> found = RunCommand({"sh", "-c", "command -v slurmctld && command -v sbcast"});
  if (!found.ok() || found->exit_code != 0) GTEST_SKIP() << "Slurm is not installed (deploy/install-deps)";
  ExpectResultLine(RunBench("sbcast", "sbcast"), "sbcast");
  ExpectResultLine(RunBench("slurm-stage", "stage"), "slurm-stage");
}

TEST_F(BenchE2ETest, MpiBcastRunsAcrossTheNamespaces) {
  if (!GRIDCAST_HAVE_MPI_BCAST) GTEST_SKIP() << "built without MPI (CMake found no MPI C compiler)";
  ExpectResultLine(RunBench("mpi", "mpi"), "mpi");
}

}  // namespace
}  // namespace gridcast
