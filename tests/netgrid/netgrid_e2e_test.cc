// Brings up a two-switch netgrid with the real `gridcast netgrid` command, measures TCP goodput
// with iperf3 inside a switch and across the shaped uplink in both directions, and checks that
// `netgrid down` leaves no namespace, link or process behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <csignal>
#include <sstream>
#include <thread>

#include "deploy/netgrid.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// TCP goodput through tbf is about 95.5% of the shaped rate (headers and ACK pacing).
constexpr double kGoodputFraction = 0.955;
constexpr double kTolerance = 0.10;

constexpr const char* kTestDir = "/tmp/gridcast-netgrid-e2e";

constexpr const char* kTopology = R"(name: two-switch-e2e
switches:
  - name: left
  - name: right
    parent: left
    uplink_up: 40mbit
    uplink_down: 60mbit
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

class NetgridE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "netgrid needs root (network namespaces); not root";
    // A fixed place, so a run killed before its TearDown is cleaned up by the next one (and by
    // the ctest cleanup fixture, which runs `netgrid down` on the same directories).
    dir_ = kTestDir;
    for (const char* state : {"state", "other", "third"}) {
      ASSERT_TRUE(NetgridDown(dir_ / state).ok());
    }
    fs::create_directories(dir_);
    state_ = (dir_ / "state").string();
    root_links_ = RootLinks();
    std::ofstream(dir_ / "topology.yaml") << kTopology;
    Result<CommandOutput> up =
        RunCommand({GRIDCAST_CLI, "netgrid", "up", (dir_ / "topology.yaml").string(), "--state", state_});
    ASSERT_TRUE(up.ok()) << up.status().ToString();
    ASSERT_EQ(up->exit_code, 0) << up->output;
    up_ = true;
  }

  void TearDown() override {
    if (!up_) return;
    servers_.clear();  // kills any server still waiting
    // A process left running inside the netgrid (started with `netgrid exec`, detached)
    // must not survive `down`.
    Result<ChildProcess> straggler = ChildProcess::Start(
        {GRIDCAST_CLI, "netgrid", "exec", "--state", state_, "left-0", "--", "sleep", "600"});
    ASSERT_TRUE(straggler.ok());
    const int straggler_pid = straggler->pid();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Result<CommandOutput> down = RunCommand({GRIDCAST_CLI, "netgrid", "down", "--state", state_});
    ASSERT_TRUE(down.ok());
    EXPECT_EQ(down->exit_code, 0) << down->output;
    Result<std::vector<std::string>> left = ListNetgridNamespaces(NetgridPrefix(state_));
    ASSERT_TRUE(left.ok());
    EXPECT_TRUE(left->empty()) << "namespaces left behind: " << left->size();
    EXPECT_FALSE(fs::exists(fs::path(state_) / "netgrid.json"));
    EXPECT_EQ(straggler->Wait(), 128 + SIGTERM) << "down must stop processes in the namespaces";
    EXPECT_NE(kill(straggler_pid, 0), 0);
    EXPECT_EQ(RootLinks(), root_links_) << "down must leave no link in the root namespace";
    fs::remove_all(dir_);
  }

  static std::string RootLinks() {
    Result<CommandOutput> links = RunCommand({"ip", "-o", "link", "show"});
    EXPECT_TRUE(links.ok());
    std::string names;
    std::istringstream lines(links->output);
    std::string line;
    while (std::getline(lines, line)) names += line.substr(0, line.find('<')) + "\n";
    return names;
  }

  std::string AddressOf(const std::string& node) {
    Result<NetgridState> state = LoadNetgridState(state_);
    EXPECT_TRUE(state.ok()) << state.status().ToString();
    const NetgridNode* entry = state->FindNode(node);
    EXPECT_NE(entry, nullptr) << node;
    return entry ? entry->address : "";
  }

  // iperf3 goodput from -> to in bits per second, measured at the receiver.
  double MeasureBps(const std::string& from, const std::string& to, int port) {
    Result<ChildProcess> server = ChildProcess::Start(
        {GRIDCAST_CLI, "netgrid", "exec", "--state", state_, to, "--", "iperf3", "-s", "-1",
         "-p", std::to_string(port)}, (dir_ / "iperf3-server.log").string());
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    servers_.push_back(std::move(*server));
    const std::string address = AddressOf(to);
    for (int attempt = 0; attempt < 50; ++attempt) {
      Result<CommandOutput> client = RunCommand(
          {GRIDCAST_CLI, "netgrid", "exec", "--state", state_, from, "--", "iperf3", "-c",
           address, "-p", std::to_string(port), "-t", "3", "-O", "1", "-J"});
      EXPECT_TRUE(client.ok());
      nlohmann::json report = nlohmann::json::parse(client->output, nullptr, false);
      // iperf3 3.12 exits 0 even when it could not connect; the report says so.
      const bool refused = !report.is_discarded() && report.contains("error") &&
                           report["error"].get<std::string>().find("refused") != std::string::npos;
      if (refused) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // server not listening yet
        continue;
      }
      servers_.back().Stop(SIGTERM);
      const nlohmann::json* bps =
          report.is_discarded() ? nullptr : &report["end"]["sum_received"]["bits_per_second"];
      if (client->exit_code != 0 || bps == nullptr || !bps->is_number()) {
        ADD_FAILURE() << "iperf3 " << from << " -> " << to << " gave no rate:\n" << client->output;
        return 0;
      }
      return bps->get<double>();
    }
    ADD_FAILURE() << "iperf3 " << from << " -> " << to << " never connected";
    return 0;
  }

  void ExpectRate(const std::string& from, const std::string& to, double shaped_bps, int port) {
    const double measured = MeasureBps(from, to, port);
    const double expected = shaped_bps * kGoodputFraction;
    std::printf("%s -> %s: %.1f Mbit/s (shaped %.0f, expected %.1f)\n", from.c_str(), to.c_str(),
                measured / 1e6, shaped_bps / 1e6, expected / 1e6);
    EXPECT_NEAR(measured, expected, expected * kTolerance) << from << " -> " << to;
  }

  fs::path dir_;
  std::string state_;
  std::string root_links_;
  bool up_ = false;
  std::vector<ChildProcess> servers_;
};

TEST_F(NetgridE2ETest, ShapedRatesHoldInEveryDirectionAndDownCleansUp) {
  ExpectRate("left-0", "left-1", 100e6, 5201);   // inside a switch: the NICs
  ExpectRate("right-0", "right-1", 100e6, 5202);
  ExpectRate("left-0", "right-0", 60e6, 5203);   // down the uplink: uplink_down
  ExpectRate("right-1", "left-1", 40e6, 5204);   // up the uplink: uplink_up
}

TEST_F(NetgridE2ETest, SecondUpOnTheSameStateIsRefused) {
  Result<CommandOutput> again = RunCommand(
      {GRIDCAST_CLI, "netgrid", "up", (dir_ / "topology.yaml").string(), "--state", state_});
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->exit_code, 0);
  EXPECT_NE(again->output.find("already up"), std::string::npos) << again->output;
}

TEST_F(NetgridE2ETest, TwoNetgridsCoexistAndFailedUpRollsBack) {
  const std::string other = (dir_ / "other").string();
  Result<CommandOutput> up = RunCommand(
      {GRIDCAST_CLI, "netgrid", "up", (dir_ / "topology.yaml").string(), "--state", other});
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(up->exit_code, 0) << up->output;
  EXPECT_EQ(ListNetgridNamespaces(NetgridPrefix(other))->size(), 6u);
  EXPECT_EQ(ListNetgridNamespaces(NetgridPrefix(state_))->size(), 6u);
  EXPECT_EQ(RunCommand({GRIDCAST_CLI, "netgrid", "down", "--state", other})->exit_code, 0);
  EXPECT_TRUE(ListNetgridNamespaces(NetgridPrefix(other))->empty());

  // A failure midway (tc fails after the namespaces exist) must roll everything back.
  const fs::path fake_bin = dir_ / "fake-bin";
  fs::create_directories(fake_bin);
  std::ofstream(fake_bin / "tc") << "#!/bin/sh\necho 'injected tc failure' >&2\nexit 1\n";
  fs::permissions(fake_bin / "tc", fs::perms::owner_all);
  const std::string third = (dir_ / "third").string();
  up = RunCommand({"env", "PATH=" + fake_bin.string() + ":" + std::getenv("PATH"), GRIDCAST_CLI,
                   "netgrid", "up", (dir_ / "topology.yaml").string(), "--state", third});
  ASSERT_TRUE(up.ok());
  EXPECT_NE(up->exit_code, 0);
  EXPECT_NE(up->output.find("rolled back"), std::string::npos) << up->output;
  EXPECT_NE(up->output.find("injected tc failure"), std::string::npos) << up->output;
  EXPECT_TRUE(ListNetgridNamespaces(NetgridPrefix(third))->empty());
  EXPECT_FALSE(fs::exists(fs::path(third) / "netgrid.json"));
}

}  // namespace
}  // namespace gridcast
