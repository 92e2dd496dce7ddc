// gridcast slurm stage against a real Slurm (Debian's munged, slurmctld and a slurmd per
// node, deploy/slurm_netgrid.h) on a shaped netgrid: from a batch script, from a salloc shell
// (outside the job's nodes), several payloads with --keep, and a node that cannot store its copy.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "deploy/netgrid.h"
#include "deploy/slurm_netgrid.h"
#include "deploy/subprocess.h"
#include "tests/unit/daemon/origin_server.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = "/tmp/gridcast-slurm-e2e";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SlurmStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "netgrid needs root (network namespaces); not root";
    for (const char* program : {"slurmctld", "slurmd", "munged", "sbatch"}) {
      Result<CommandOutput> found = RunCommand({"sh", "-c", std::string("command -v ") + program});
      if (!found.ok() || found->exit_code != 0) GTEST_SKIP() << program << " is not installed (deploy/install-deps)";
    }
    ASSERT_TRUE(NetgridDown(state_dir_).ok());
    fs::remove_all(kDir);
    fs::create_directories(kDir / "payloads");
    std::ofstream(kDir / "topology.yaml") << "name: slurm-e2e\nswitches:\n  - name: s\nnodes:\n"
                                            "  - switch: s\n    count: 4\n    up: 50mbit\n    down: 50mbit\n";
    Result<CommandOutput> up =
        RunCommand({GRIDCAST_CLI, "netgrid", "up", (kDir / "topology.yaml").string(), "--state", state_dir_.string()});
    ASSERT_TRUE(up.ok() && up->exit_code == 0) << (up.ok() ? up->output : up.status().message());
    Result<NetgridState> state = LoadNetgridState(state_dir_);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    netgrid_ = *state;
    Result<fs::path> slurm = StartSlurmOnNetgrid(netgrid_, state_dir_);
    ASSERT_TRUE(slurm.ok()) << slurm.status().ToString();
  }

  void TearDown() override {
    if (geteuid() != 0) return;
    EXPECT_TRUE(NetgridDown(state_dir_).ok());
    fs::remove_all(kDir);
  }

  fs::path MakePayload(const std::string& name, uint64_t bytes) {
    std::mt19937_64 random(bytes);
    std::string data(bytes, '\0');
    for (char& c : data) c = static_cast<char>(random());
    const fs::path path = kDir / "payloads" / name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }

  // The node-local directory the jobs call `local`, as the host sees node i's.
  fs::path NodeLocal(int i) const { return SlurmNodeDir(state_dir_, netgrid_.nodes[i].name); }
  std::string Local() const { return SlurmLocalDir(state_dir_).string(); }

  // Runs `script` (sh) as a batch job on every node and waits for it: its exit code and output.
  CommandOutput Batch(const std::string& script) {
    const fs::path file = kDir / ("job-" + std::to_string(++jobs_) + ".sh");
    std::ofstream(file) << "#!/bin/sh\n" << script << "\n";
    fs::permissions(file, fs::perms::owner_all);
    const fs::path output = kDir / ("job-" + std::to_string(jobs_) + ".out");
    Result<CommandOutput> run = RunCommand(SlurmExecArgv(
        netgrid_.nodes[0], state_dir_,
        {"sbatch", "--wait", "--nodes=" + std::to_string(netgrid_.nodes.size()), "--output=" + output.string(), file.string()}));
    EXPECT_TRUE(run.ok());
    return {run.ok() ? run->exit_code : -1, ReadFile(output)};
  }

  void ExpectCopyOnEveryNode(const fs::path& payload, const std::string& relative) {
    const std::string expected = ReadFile(payload);
    for (size_t i = 0; i < netgrid_.nodes.size(); ++i) {
      const fs::path copy = NodeLocal(static_cast<int>(i)) / relative;
      ASSERT_TRUE(fs::exists(copy)) << copy;
      EXPECT_TRUE(ReadFile(copy) == expected) << copy << " differs";
    }
  }

  // No daemon, srun or state file (the cluster file and its secret) outlives a stage that did
  // not keep them.
  void ExpectNothingLeft() {
    // A stage's daemons read the job's cluster file from their standard input; other tests'
    // daemons, running beside this one, do not.
    Result<CommandOutput> left = RunCommand({"pgrep", "-f", "gridcastd --name .* --cluster /dev/stdin"});
    ASSERT_TRUE(left.ok());
    EXPECT_NE(left->exit_code, 0) << "daemons still running:\n" << left->output;
    for (const auto& entry : fs::directory_iterator("/tmp")) {
      const std::string name = entry.path().filename().string();
      const bool job_state = name.rfind("gridcast-slurm-", 0) == 0 &&
                             name.find_first_not_of("0123456789", 15) == std::string::npos;
      EXPECT_FALSE(job_state) << "the stage's state stayed: " << entry.path();
    }
  }

  const fs::path state_dir_ = kDir / "netgrid";
  NetgridState netgrid_;
  int jobs_ = 0;
};

TEST_F(SlurmStageTest, ABatchScriptStagesAVerifiedCopyOnEveryNode) {
  const fs::path payload = MakePayload("dataset.bin", (6 << 20) + 123);
  const CommandOutput job = Batch(std::string(GRIDCAST_CLI) + " slurm stage " + payload.string() + " --dest " + Local() +
                                  "/stage --topology " + (kDir / "topology.yaml").string() + " --json");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const nlohmann::json summary = nlohmann::json::parse(job.output.substr(job.output.find('{')), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << job.output;
  EXPECT_TRUE(summary["verified"].get<bool>()) << job.output;
  EXPECT_EQ(summary["members"].size(), netgrid_.nodes.size() - 1) << job.output;
  ExpectCopyOnEveryNode(payload, "stage/dataset.bin");
  ExpectNothingLeft();
}

TEST_F(SlurmStageTest, AUrlIsFetchedByTheStagingNodesDaemonAndLandsOnEveryNode) {
  const fs::path payload = MakePayload("origin.bin", (5 << 20) + 77);
  fs::create_directories(kDir / "origin" / "root");
  fs::copy_file(payload, kDir / "origin" / "root" / "origin.bin");
  // An origin on every node's own loopback, the same port: whichever node the batch script runs
  // on, its daemon (the source) reaches one there, and no other node can.
  constexpr int kPort = 18080;
  std::vector<std::unique_ptr<OriginServer>> origins;
  for (const NetgridNode& node : netgrid_.nodes) {
    origins.push_back(std::make_unique<OriginServer>(kDir / "origin", false,
                                                     std::vector<std::string>{"ip", "netns", "exec", node.netns}, kPort));
    ASSERT_TRUE(origins.back()->up()) << "no origin in " << node.netns;
  }
  Result<CommandOutput> sha = RunCommand({"sha256sum", payload.string()});
  ASSERT_TRUE(sha.ok() && sha->exit_code == 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(kPort) + "/drop/2000000/1/origin.bin";
  const CommandOutput job = Batch(std::string(GRIDCAST_CLI) + " slurm stage " + url + " --dest " + Local() +
                                  "/stage --sha256 " + sha->output.substr(0, 64) + " --json");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  const nlohmann::json summary = nlohmann::json::parse(job.output.substr(job.output.find('{')), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << job.output;
  EXPECT_TRUE(summary["verified"].get<bool>()) << job.output;
  EXPECT_EQ(summary["origin"]["resumed"], 1) << job.output;
  ExpectCopyOnEveryNode(payload, "stage/origin.bin");  // the source's own copy too
  ExpectNothingLeft();
}

TEST_F(SlurmStageTest, FromASallocShellItStagesFromTheFirstNode) {
  // salloc's command runs where salloc does: here on node 0's network, outside any slurmd's
  // namespaces, so not on a node of the job.
  const fs::path payload = MakePayload("from-salloc.bin", 3 << 20);
  Result<CommandOutput> run = RunCommand(SlurmExecArgv(
      netgrid_.nodes[0], state_dir_,
      {"salloc", "--nodes=" + std::to_string(netgrid_.nodes.size()), GRIDCAST_CLI, "slurm", "stage", payload.string(),
       "--dest", Local() + "/salloc"}));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("verified"), std::string::npos) << run->output;
  ExpectCopyOnEveryNode(payload, "salloc/from-salloc.bin");
  ExpectNothingLeft();
}

TEST_F(SlurmStageTest, KeptDaemonsServeSeveralPayloadsUntilStopped) {
  const fs::path first = MakePayload("first.bin", 2 << 20);
  const fs::path second = MakePayload("second.bin", (3 << 20) + 7);
  // From another directory than the first: kept daemons send any file the job's user can read.
  fs::create_directories(kDir / "elsewhere");
  const fs::path third = kDir / "elsewhere" / "third.bin";
  fs::copy_file(MakePayload("third.bin", 1 << 20), third);
  const std::string gridcast = GRIDCAST_CLI;
  const std::string kept = " --dest " + Local() + "/kept --keep --daemon-arg=--window=4";
  const CommandOutput job = Batch("set -e\n" + gridcast + " slurm stage " + first.string() + kept + "\n" + gridcast +
                                  " slurm stage " + second.string() + kept + "\n"
                                  "pgrep -af 'gridcastd --name' | grep -c -- '--window=4'\n"
                                  "if " + gridcast + " slurm stage " + first.string() + " --dest " + Local() +
                                  "/elsewhere --keep; then echo 'another --dest was taken'; fi\n" +
                                  gridcast + " send " + third.string() + " --cluster /tmp/gridcast-slurm-$SLURM_JOB_ID/cluster.yaml\n" +
                                  gridcast + " slurm stop\n");
  ASSERT_EQ(job.exit_code, 0) << job.output;
  // One set of daemons, with the argument given, served both stages (four, one per node); asked
  // to store elsewhere, they
  // refused rather than store where the earlier stage said.
  EXPECT_NE(job.output.find("\n4\n"), std::string::npos) << job.output;
  EXPECT_NE(job.output.find("the daemons kept in this job run with other settings"), std::string::npos) << job.output;
  EXPECT_EQ(job.output.find("another --dest was taken"), std::string::npos) << job.output;
  ExpectCopyOnEveryNode(first, "kept/first.bin");
  ExpectCopyOnEveryNode(second, "kept/second.bin");
  const std::string expected = ReadFile(third);
  for (int i = 1; i < static_cast<int>(netgrid_.nodes.size()); ++i) {
    EXPECT_TRUE(ReadFile(NodeLocal(i) / "kept" / "third.bin") == expected) << "node " << i;
  }
  ExpectNothingLeft();
}

TEST_F(SlurmStageTest, ANodeThatCannotStoreFailsTheStageNamingIt) {
  const fs::path payload = MakePayload("blocked.bin", 1 << 20);
  // On node 2 a file stands where the destination directory would be.
  std::ofstream(NodeLocal(2) / "blocked") << "not a directory";
  const auto start = std::chrono::steady_clock::now();
  const CommandOutput job = Batch(std::string(GRIDCAST_CLI) + " slurm stage " + payload.string() + " --dest " + Local() + "/blocked");
  EXPECT_NE(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("the daemons of " + netgrid_.nodes[2].name + " exited"), std::string::npos) << job.output;
  // As soon as srun says so, not after the start timeout (60 s).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(45));
  ExpectNothingLeft();
}

// The state directory keeps the secret: one that others can reach (made beforehand by anyone,
// at a path in /tmp that is easy to guess) is refused, and nothing is written into it.
TEST_F(SlurmStageTest, AStateDirectoryOthersCanReachIsRefused) {
  const fs::path payload = MakePayload("private.bin", 1 << 20);
  const fs::path open_state = kDir / "open-state";
  fs::create_directories(open_state);
  fs::permissions(open_state, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  const CommandOutput job = Batch(std::string(GRIDCAST_CLI) + " slurm stage " + payload.string() + " --dest " + Local() +
                                  "/private --state " + open_state.string());
  EXPECT_NE(job.exit_code, 0) << job.output;
  EXPECT_NE(job.output.find("is not a private directory of this user"), std::string::npos) << job.output;
  EXPECT_TRUE(fs::is_empty(open_state));
  ExpectNothingLeft();
}

}  // namespace
}  // namespace gridcast
