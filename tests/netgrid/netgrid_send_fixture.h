// A netgrid with a gridcastd per node for one test, and `gridcast send` (or another command
// that prints a summary) run against it in the background: what the fault, load and allgather
// tests share.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_file.h"
#include "deploy/netgrid.h"
#include "deploy/subprocess.h"

namespace gridcast {

namespace fs = std::filesystem;

struct Sent {
  int exit_code = -1;
  std::string output;
  nlohmann::json summary;
  double seconds = 0;  // the command's own wall time
};

// A memory field of /proc/PID/status in bytes (VmRSS, VmHWM, RssAnon, RssFile...), or 0 once
// the process is gone.
inline uint64_t ProcessMemoryBytes(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":")) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

class NetgridSendFixture : public ::testing::Test {
 protected:
  // `state` is the test's directory (removed before and after); `topology` the network. With
  // `sparse_data_bytes`, the daemons' data directories are on ext4 in a sparse image of that
  // size (a member reserves or checks the space of a payload: a test of terabytes needs a
  // filesystem that has them without the disk).
  NetgridSendFixture(std::string state, std::string topology, uint64_t sparse_data_bytes = 0)
      : state_dir_(std::move(state)), topology_(std::move(topology)), sparse_data_bytes_(sparse_data_bytes) {}

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "netgrid needs root (network namespaces); not root";
    ASSERT_TRUE(NetgridDown(ng_).ok());  // what a killed run left
    UnmountData();
    fs::remove_all(state_dir_);
    fs::create_directories(state_dir_);
    if (sparse_data_bytes_ > 0) {
      const fs::path image = state_dir_ / "data.img";
      std::ofstream(image).close();
      fs::resize_file(image, sparse_data_bytes_);
      fs::create_directories(ng_ / "data");
      ASSERT_TRUE(RunChecked({"mkfs.ext4", "-q", "-F", image.string()}).ok());
      ASSERT_TRUE(RunChecked({"mount", "-o", "loop", image.string(), (ng_ / "data").string()}).ok());
    }
    std::ofstream(state_dir_ / "topology.yaml") << topology_;
    Result<CommandOutput> up = RunCommand({GRIDCAST_CLI, "netgrid", "up", (state_dir_ / "topology.yaml").string(),
                                           "--daemons", "--state", ng_.string()});
    ASSERT_TRUE(up.ok() && up->exit_code == 0) << (up.ok() ? up->output : up.status().message());
    Result<NetgridState> state = LoadNetgridState(ng_);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    state_ = *state;
  }
  void TearDown() override {
    if (geteuid() != 0) return;
    for (const NetgridNode& node : state_.nodes) SignalNetgridNode(node, SIGCONT);
    EXPECT_TRUE(NetgridDown(ng_).ok());
    UnmountData();
    fs::remove_all(state_dir_);
  }

  // A file of `bytes` pseudo-random bytes (from `seed`) in the netgrid's payload directory.
  fs::path MakePayload(const std::string& file, uint64_t bytes, uint64_t seed) const {
    const fs::path path = ng_ / "payloads" / file;
    std::mt19937_64 random(seed);
    std::vector<uint64_t> words(bytes / 8 + 1);
    for (uint64_t& w : words) w = random();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(bytes));
    return path;
  }

  // Starts `gridcast send PAYLOAD --name NAME --json ARGS...`; the result comes later.
  std::future<Sent> StartSend(const fs::path& payload, const std::string& name, std::vector<std::string> args) const {
    std::vector<std::string> argv = {"send", payload.string(), "--name", name};
    argv.insert(argv.end(), args.begin(), args.end());
    return StartCommand(std::move(argv));
  }

  // Starts `gridcast ARGS... --cluster CLUSTER --json` (a command that prints a summary).
  std::future<Sent> StartCommand(std::vector<std::string> args) const {
    std::vector<std::string> argv = {GRIDCAST_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--cluster", (ng_ / "cluster.yaml").string(), "--json"});
    return std::async(std::launch::async, [argv] {
      Sent sent;
      const auto start = std::chrono::steady_clock::now();
      Result<CommandOutput> out = RunCommand(argv);
      sent.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!out.ok()) return sent;
      sent.exit_code = out->exit_code;
      sent.output = out->output;
      // The summary is a JSON object from the first line that opens one to the end (warnings
      // may come before it).
      const size_t at = out->output.starts_with("{") ? 0 : out->output.find("\n{");
      if (at != std::string::npos) sent.summary = nlohmann::json::parse(out->output.substr(at), nullptr, false);
      return sent;
    });
  }

  // Waits (up to `timeout`) until `member` reports a plan with at least one chunk done, i.e.
  // the broadcast is past its start there: a fixed sleep may end, on a loaded host, while the
  // members are still being prepared. False when it never did.
  bool WaitUntilMemberHoldsChunks(const std::string& member, std::chrono::seconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      Result<CommandOutput> out = RunCommand({GRIDCAST_CLI, "status", "--cluster", (ng_ / "cluster.yaml").string(),
                                              "--member", member, "--json"});
      const nlohmann::json status =
          out.ok() ? nlohmann::json::parse(out->output, nullptr, false) : nlohmann::json();
      if (status.is_object() && status["members"].is_array()) {
        for (const auto& entry : status["members"]) {
          if (!entry.contains("plans")) continue;
          for (const auto& plan : entry["plans"]) {
            if (plan.value("chunks_done", uint64_t{0}) > 0) return true;
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  const NetgridNode& Node(const std::string& name) const { return *state_.FindNode(name); }
  // The cluster file netgrid wrote for its daemons.
  Result<ClusterConfig> Cluster() const {
    std::ifstream in(ng_ / "cluster.yaml");
    std::stringstream text;
    text << in.rdbuf();
    return ParseClusterFile(text.str(), ng_.string());
  }
  fs::path DataDir(const std::string& node) const { return ng_ / "data" / node; }
  std::string SwitchNetns(const std::string& name) const { return state_.prefix + "-" + name; }

  static void Ip(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"ip"};
    argv.insert(argv.end(), args.begin(), args.end());
    Status status = RunChecked(argv);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }

  static bool DigestOk(const Sent& sent, const std::string& member) {
    if (!sent.summary.is_object()) return false;
    for (const auto& m : sent.summary["members"]) {
      if (m["name"] == member) return m["digest_ok"].get<bool>();
    }
    return false;
  }

  // The send succeeded and every member holds a verified copy.
  static void ExpectEveryCopy(const Sent& sent) {
    ASSERT_EQ(sent.exit_code, 0) << sent.output;
    ASSERT_TRUE(sent.summary.is_object()) << sent.output;
    EXPECT_TRUE(sent.summary["verified"].get<bool>()) << sent.output;
    for (const auto& m : sent.summary["members"]) EXPECT_TRUE(m["digest_ok"].get<bool>()) << m.dump();
  }

  // The sparse image's mount, if a run left one (it is gone with the daemons that used it).
  void UnmountData() const {
    if (sparse_data_bytes_ == 0 || !fs::exists(ng_ / "data")) return;
    (void)RunCommand({"umount", (ng_ / "data").string()});
  }

  const fs::path state_dir_;
  const std::string topology_;
  const uint64_t sparse_data_bytes_;
  const fs::path ng_ = state_dir_ / "ng";
  NetgridState state_;
};

}  // namespace gridcast
