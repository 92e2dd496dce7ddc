// libgridcast-mpi.so under an MPI program no one here wrote: Debian's mpi4py running
// mpi_shim_check.py under mpirun on a netgrid with a gridcastd per node, two ranks per node.
// The script passes without the shim and with it; with it, the large broadcasts and allgathers
// must have gone through gridcast, a rank whose buffer differs in size is an error on every
// rank, and a daemon killed mid-broadcast or mid-allgather fails the call on every rank with no
// wrong data kept.
#include <nlohmann/json.hpp>
#include <sstream>

#include "deploy/mpi_launch.h"
#include "tests/netgrid/netgrid_send_fixture.h"

namespace gridcast {
namespace {

constexpr const char* kTopology =
    "name: flat4\n"
    "switches:\n"
    "  - name: core\n"
    "nodes:\n"
    "  - switch: core\n"
    "    count: 4\n"
    "    up: 100mbit\n"
    "    down: 100mbit\n";

class MpiShimTest : public NetgridSendFixture {
 protected:
  MpiShimTest() : NetgridSendFixture("/tmp/gridcast-mpi-shim-e2e", kTopology) {}

  void SetUp() override {
    if (!GRIDCAST_HAVE_MPI_SHIM) GTEST_SKIP() << "built without MPI: no libgridcast-mpi.so";
    if (!fs::exists("/usr/lib/python3/dist-packages/mpi4py")) GTEST_SKIP() << "python3-mpi4py is not installed";
    NetgridSendFixture::SetUp();
  }

  // mpirun of the script with ARGS, two ranks per node; `shim` preloads the library. Returns the
  // output (every rank's stderr included) and the parsed RESULT line.
  std::pair<std::string, nlohmann::json> RunScript(bool shim, const std::vector<std::string>& args,
                                                   int ranks_per_node = 2) {
    MpiRun run;
    run.command = {"/usr/bin/python3", GRIDCAST_MPI_SHIM_CHECK};
    run.command.insert(run.command.end(), args.begin(), args.end());
    run.ranks_per_node = ranks_per_node;
    run.timeout_s = 240;
    if (shim) {
      run.environment = {"LD_PRELOAD=" + std::string(GRIDCAST_MPI_SHIM_PRELOAD), "GRIDCAST_CLUSTER=" + (ng_ / "cluster.yaml").string(),
                         "GRIDCAST_MPI_THRESHOLD=256KiB", "GRIDCAST_MPI_VERBOSE=2", "GRIDCAST_MPI_TIMEOUT=20",
                         // The sanitized build's shim: the Python interpreter's leaks are not ours.
                         "ASAN_OPTIONS=detect_leaks=0"};
    }
    Result<std::string> output = RunMpiProgram(state_, "core-0", state_dir_ / (shim ? "mpi-shim" : "mpi"), run);
    EXPECT_TRUE(output.ok()) << output.status().ToString();
    if (!output.ok()) return {output.status().message(), nlohmann::json()};
    const size_t at = output->find("RESULT ");
    nlohmann::json result;
    if (at != std::string::npos) {
      result = nlohmann::json::parse(output->substr(at + 7, output->find('\n', at) - at - 7), nullptr, false);
    }
    return {*output, result};
  }

  // Lines the shim wrote ("gridcast-mpi: ...") that contain `needle`.
  static int CountShimLines(const std::string& text, const std::string& needle) {
    std::istringstream lines(text);
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      n += line.rfind("gridcast-mpi:", 0) == 0 && line.find(needle) != std::string::npos;
    }
    return n;
  }

  static int Count(const std::string& text, const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  }

  // The daemon's pid in a node's namespace (before mpirun adds its own processes there).
  int DaemonPid(const std::string& node) {
    Result<CommandOutput> out = RunCommand({"ip", "netns", "pids", Node(node).netns});
    EXPECT_TRUE(out.ok() && out->exit_code == 0);
    return out.ok() ? std::atoi(out->output.c_str()) : 0;
  }
};

TEST_F(MpiShimTest, AnUnmodifiedMpi4pyProgramPassesWithAndWithoutTheShim) {
  auto [plain, plain_result] = RunScript(false, {"checks"});
  ASSERT_TRUE(plain_result.is_object()) << plain;
  EXPECT_TRUE(plain_result["ok"].get<bool>()) << plain;
  EXPECT_EQ(Count(plain, "gridcast-mpi"), 0) << plain;

  auto [shim, shim_result] = RunScript(true, {"checks"});
  ASSERT_TRUE(shim_result.is_object()) << shim;
  EXPECT_TRUE(shim_result["ok"].get<bool>()) << shim;
  EXPECT_EQ(shim_result["checks"], plain_result["checks"]);
  // The five broadcasts and four nonblocking ones above the threshold went through gridcast
  // (the sub-communicators' too), each said once by its root; the 80-byte one stayed with MPI.
  // So did the allgathers but the 3-byte one: one in each half of the Split, three on the world
  // (one while an MPI_Ibcast was in flight, whose fifth call that is).
  EXPECT_EQ(Count(shim, "MPI_Bcast of"), 5) << shim;
  EXPECT_EQ(Count(shim, "MPI_Ibcast of"), 5) << shim;
  EXPECT_EQ(Count(shim, "MPI_Allgather of"), 5) << shim;
  EXPECT_EQ(Count(shim, "by gridcast"), 15) << shim;
  // Checked with the shim's default chunk digest (docs/mpi.md, "Which digest").
  EXPECT_EQ(Count(shim, "xxh3 chunks"), 10) << shim;
  // (Only the shim's lines: mpirun may warn of its own, e.g. "setpgid(...) failed".)
  EXPECT_EQ(CountShimLines(shim, "fail"), 0) << shim;
  // The daemons run as root here: every rank off the root's node lent its buffer, and its
  // daemon received into it (docs/mpi.md, "Into the rank's memory"); none fell back to a copy.
  EXPECT_GT(CountShimLines(shim, "received into this rank's memory by its daemon"), 0) << shim;
  EXPECT_EQ(CountShimLines(shim, "the daemon copies into its memory"), 0) << shim;
  // Every node's copy (and every allgather part) was removed once read.
  for (const NetgridNode& node : state_.nodes) {
    const fs::path memory = NetgridMemoryRoot(state_.prefix) / node.name;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(memory, ec)) {
      EXPECT_EQ(entry.path().filename().string().rfind("mpi-", 0), std::string::npos) << entry.path();
    }
  }
}

// One rank per node: the root is alone on its node and lends its buffer too, so no node keeps a
// copy of any broadcast (docs/mpi.md, "Into the rank's memory").
TEST_F(MpiShimTest, WithOneRankPerNodeEveryBufferIsLent) {
  auto [shim, result] = RunScript(true, {"checks"}, /*ranks_per_node=*/1);
  ASSERT_TRUE(result.is_object()) << shim;
  EXPECT_TRUE(result["ok"].get<bool>()) << shim;
  EXPECT_EQ(CountShimLines(shim, "fail"), 0) << shim;
  // Every broadcast through gridcast (the ten of the test above, each said by its root) was
  // sent from the root's memory.
  EXPECT_EQ(Count(shim, "MPI_Bcast of") + Count(shim, "MPI_Ibcast of"), 10) << shim;
  EXPECT_EQ(Count(shim, "sent from the root's memory"), 10) << shim;
  EXPECT_GT(CountShimLines(shim, "received into this rank's memory by its daemon"), 0) << shim;
}

TEST_F(MpiShimTest, ABufferOfAnotherSizeIsAnErrorOnEveryRank) {
  auto [out, result] = RunScript(true, {"mismatch"});
  ASSERT_TRUE(result.is_object()) << out;
  EXPECT_TRUE(result["ok"].get<bool>()) << out;
  EXPECT_NE(out.find("rank 7's buffer has 499999 bytes, the root's (rank 0) 500000"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 7's buffer has 99999 bytes, rank 0's (rank 0) 100000"), std::string::npos) << out;
}

TEST_F(MpiShimTest, ADaemonKilledMidBroadcastFailsTheCallOnEveryRank) {
  const int pid = DaemonPid("core-3");
  ASSERT_GT(pid, 0);
  auto [out, result] = RunScript(true, {"kill", std::to_string(pid)});
  ASSERT_TRUE(result.is_object()) << out;
  EXPECT_TRUE(result["ok"].get<bool>()) << out;
  EXPECT_NE(out.find("MPI_Bcast by gridcast failed"), std::string::npos) << out;
}

TEST_F(MpiShimTest, ADaemonKilledMidAllgatherFailsTheCallOnEveryRank) {
  const int pid = DaemonPid("core-2");
  ASSERT_GT(pid, 0);
  auto [out, result] = RunScript(true, {"kill-allgather", std::to_string(pid)});
  ASSERT_TRUE(result.is_object()) << out;
  EXPECT_TRUE(result["ok"].get<bool>()) << out;
  EXPECT_NE(out.find("MPI_Allgather by gridcast failed"), std::string::npos) << out;
}

}  // namespace
}  // namespace gridcast
