// Operations: `--version` of both binaries, the client's GRIDCAST_CLUSTER, `gridcastd
// --check-config` on good and bad configurations (it binds nothing and changes nothing), and
// deploy/systemd/gridcastd.service checked by `systemd-analyze verify` where that is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// "NAME 1.2.3 (commit 0123456789ab[-dirty] or unknown, BUILD TYPE)\n" (std::regex trips GCC 12's
// -Wmaybe-uninitialized in the sanitizer build).
bool IsVersionLine(const std::string& name, const std::string& text) {
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const auto is_hex = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'f'); };
  std::string_view rest = text;
  if (!rest.starts_with(name + " ")) return false;
  rest.remove_prefix(name.size() + 1);
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (!rest.starts_with('.')) return false;
      rest.remove_prefix(1);
    }
    const size_t digits = std::find_if_not(rest.begin(), rest.end(), is_digit) - rest.begin();
    if (digits == 0) return false;
    rest.remove_prefix(digits);
  }
  if (!rest.starts_with(" (commit ")) return false;
  rest.remove_prefix(9);
  if (rest.starts_with("unknown")) {
    rest.remove_prefix(7);
  } else {
    if (rest.size() < 12 || !std::all_of(rest.begin(), rest.begin() + 12, is_hex)) return false;
    rest.remove_prefix(12);
    if (rest.starts_with("-dirty")) rest.remove_prefix(6);
  }
  return rest.starts_with(", ") && rest.size() > 4 && rest.ends_with(")\n") &&
         rest.substr(2, rest.size() - 4).find_first_of(")\n") == std::string_view::npos;
}

// One line naming the binary, the project's version, the commit built and the build type; exit 0,
// and nothing else runs (gridcast needs no subcommand for it, gridcastd no cluster file).
TEST(Version, BothBinariesSayWhatWasBuilt) {
  EXPECT_TRUE(IsVersionLine("gridcast", "gridcast 0.1.0 (commit 36fed260589c-dirty, RelWithDebInfo)\n"));
  EXPECT_TRUE(IsVersionLine("gridcast", "gridcast 10.2.33 (commit unknown, no build type)\n"));
  for (const char* bad : {"gridcast 0.1 (commit 36fed260589c, Release)\n", "gridcast 0.1.0 (commit 36fed26, Release)\n",
                          "gridcast 0.1.0 (commit 36fed260589c, Release)", "gridcastd 0.1.0 (commit unknown, x)\n",
                          "gridcast 0.1.0 (commit unknown, )\n"}) {
    EXPECT_FALSE(IsVersionLine("gridcast", bad)) << bad;
  }
  for (const char* binary : {GRIDCAST_CLI, GRIDCASTD}) {
    Result<CommandOutput> out = RunCommand({binary, "--version"});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->exit_code, 0) << out->output;
    EXPECT_TRUE(IsVersionLine(fs::path(binary).filename().string(), out->output)) << out->output;
  }
}

// The client finds the cluster file where the MPI shim does, in GRIDCAST_CLUSTER; --cluster
// wins over it; with neither, the flag is required. (The files do not exist: the error names
// the one the client read.)
TEST(ClusterFileFromTheEnvironment, GridcastClusterNamesItAndTheFlagWins) {
  const auto list = [](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"env", "-u", "GRIDCAST_CLUSTER"});
    Result<CommandOutput> out = RunCommand(argv);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : CommandOutput{};
  };
  CommandOutput out = list({GRIDCAST_CLI, "list"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("--cluster is required"), std::string::npos) << out.output;
  out = list({"GRIDCAST_CLUSTER=/nonexistent/from-env.yaml", GRIDCAST_CLI, "list"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_NE(out.output.find("cannot read cluster file /nonexistent/from-env.yaml"), std::string::npos) << out.output;
  out = list({"GRIDCAST_CLUSTER=/nonexistent/from-env.yaml", GRIDCAST_CLI, "send", "p.bin", "--cluster",
              "/nonexistent/from-flag.yaml"});
  EXPECT_NE(out.output.find("from-flag.yaml"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("from-env.yaml"), std::string::npos) << out.output;
  out = list({"GRIDCAST_CLUSTER=", GRIDCAST_CLI, "status"});
  EXPECT_NE(out.output.find("--cluster is required"), std::string::npos) << out.output;
}

class CheckConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gridcast-check-config-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Write("cluster.yaml", "secret: " + std::string(64, 'a') +
                              "\nmembers:\n"
                              "  - name: n1\n    control: 127.0.0.1:17001\n    data: 127.0.0.1:17002\n"
                              "  - name: n2\n    control: 127.0.0.1:17011\n    data: 127.0.0.1:17012\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }

  // gridcastd --check-config with these settings, the data directory `data` in the test's.
  CommandOutput Check(std::vector<std::string> args, const std::string& data = "data") {
    std::vector<std::string> argv = {GRIDCASTD, "--check-config", "--cluster", (dir_ / "cluster.yaml").string(),
                                     "--data-dir", (dir_ / data).string(), "--memory-dir", (dir_ / "memory").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    Result<CommandOutput> out = RunCommand(argv);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : CommandOutput{};
  }

  fs::path dir_;
};

TEST_F(CheckConfigTest, AGoodConfigurationSaysWhatWouldRunAndChangesNothing) {
  const CommandOutput out = Check({"--name", "n1"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("configuration OK: member n1 of 2 members"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("control 127.0.0.1:17001"), std::string::npos) << out.output;
  const CommandOutput metrics = Check({"--name", "n1", "--metrics", "127.0.0.1:9464"});
  EXPECT_EQ(metrics.exit_code, 0) << metrics.output;
  EXPECT_NE(metrics.output.find("metrics http://127.0.0.1:9464/metrics"), std::string::npos) << metrics.output;
  EXPECT_FALSE(fs::exists(dir_ / "data")) << "--check-config made the data directory";
  EXPECT_FALSE(fs::exists(dir_ / "memory")) << "--check-config made the memory directory";
  // The same from a config file.
  Write("gridcastd.yaml", "name: n2\ncluster: " + (dir_ / "cluster.yaml").string() + "\n");
  Result<CommandOutput> from_file =
      RunCommand({GRIDCASTD, "--check-config", "--config", (dir_ / "gridcastd.yaml").string(), "--data-dir",
                  (dir_ / "data").string(), "--memory-dir", (dir_ / "memory").string()});
  ASSERT_TRUE(from_file.ok());
  EXPECT_EQ(from_file->exit_code, 0) << from_file->output;
  EXPECT_NE(from_file->output.find("member n2"), std::string::npos) << from_file->output;
}

TEST_F(CheckConfigTest, EachProblemIsNamedWithExitCode2) {
  auto refused = [&](std::vector<std::string> args, const std::string& says) {
    const CommandOutput out = Check(std::move(args));
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_NE(out.output.find(says), std::string::npos) << out.output;
  };
  refused({"--name", "n9"}, "'n9' is not a member");
  refused({"--name", "n1", "--data", "nowhere"}, "data address");
  refused({"--name", "n1", "--log-level", "loud"}, "--log-level");
  refused({"--name", "n1", "--metrics", "everywhere"}, "--metrics");
  refused({"--name", "n1", "--tls-cert", (dir_ / "missing.pem").string(), "--tls-key", (dir_ / "missing.key").string(),
           "--tls-ca", (dir_ / "missing-ca.pem").string()},
          "missing");
  // A memory directory holding someone else's files is never emptied.
  fs::create_directories(dir_ / "memory");
  Write("memory/precious.txt", "not gridcast's");
  refused({"--name", "n1"}, "not empty and not one of gridcast's");
  fs::remove_all(dir_ / "memory");
  // A data directory that cannot be made.
  Write("blocker", "a file");
  const CommandOutput out = Check({"--name", "n1"}, "blocker/data");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("data directory"), std::string::npos) << out.output;
  // A cluster file whose topology does not parse.
  Write("cluster.yaml", "secret: " + std::string(64, 'a') + "\ntopology: bad.yaml\nmembers:\n"
                        "  - name: n1\n    control: 127.0.0.1:17001\n    data: 127.0.0.1:17002\n");
  Write("bad.yaml", "name: bad\nnodes: [[[\n");
  refused({"--name", "n1"}, "bad.yaml");
  // Without --name both members are this host's (127.0.0.1): which one cannot be guessed.
  Write("cluster.yaml", "secret: " + std::string(64, 'a') + "\nmembers:\n"
                        "  - name: n1\n    control: 127.0.0.1:17001\n    data: 127.0.0.1:17002\n"
                        "  - name: n2\n    control: 127.0.0.1:17011\n    data: 127.0.0.1:17012\n"
                        "  - name: far\n    control: 192.0.2.9:17001\n    data: 192.0.2.9:17002\n");
  refused({}, "several members have an address of this host (n1, n2): set --name");
  // Every problem of a member at once, each a line: an address not this host's, a topology
  // without the member, a CA named without a certificate.
  Write("cluster.yaml", "secret: " + std::string(64, 'a') + "\ntopology: t.yaml\ntls_ca: ca.pem\nmembers:\n"
                        "  - name: n1\n    control: 127.0.0.1:17001\n    data: 127.0.0.1:17002\n"
                        "  - name: far\n    control: 192.0.2.9:17001\n    data: 192.0.2.9:17002\n");
  Write("t.yaml", "name: t\nswitches:\n  - name: s\nnodes:\n  - switch: s\n    names: [n1]\n");
  const CommandOutput far = Check({"--name", "far"});
  EXPECT_EQ(far.exit_code, 2) << far.output;
  EXPECT_NE(far.output.find("t.yaml: names no node 'far'"), std::string::npos) << far.output;
  EXPECT_NE(far.output.find("member far is reached at 192.0.2.9, which is not an address of this host"),
            std::string::npos)
      << far.output;
  EXPECT_NE(far.output.find("names a CA (tls_ca) but this daemon has no certificate"), std::string::npos) << far.output;
}

TEST(SystemdUnit, VerifiesAndIsHardened) {
  std::ifstream in(GRIDCAST_SYSTEMD_UNIT);
  ASSERT_TRUE(in) << GRIDCAST_SYSTEMD_UNIT;
  std::stringstream text;
  text << in.rdbuf();
  std::string unit = text.str();
  for (const char* line : {"User=gridcast", "StateDirectory=gridcast", "RuntimeDirectory=gridcast", "NoNewPrivileges=yes",
                           "ProtectSystem=strict", "CapabilityBoundingSet=\n", "--check-config", "Restart=on-failure"}) {
    EXPECT_NE(unit.find(line), std::string::npos) << "the unit lacks " << line;
  }
  if (access("/usr/bin/systemd-analyze", X_OK) != 0) GTEST_SKIP() << "systemd-analyze is not installed";
  // This build's daemon where the unit expects the installed one.
  for (size_t at = unit.find("/usr/local/bin/gridcastd"); at != std::string::npos;
       at = unit.find("/usr/local/bin/gridcastd", at)) {
    unit.replace(at, std::string("/usr/local/bin/gridcastd").size(), GRIDCASTD);
  }
  const fs::path dir = fs::temp_directory_path() / ("gridcast-unit-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "gridcastd.service") << unit;
  Result<CommandOutput> out = RunCommand({"systemd-analyze", "verify", (dir / "gridcastd.service").string()});
  fs::remove_all(dir);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << out->output;
  EXPECT_EQ(out->output.find("gridcastd.service"), std::string::npos) << out->output;
}

// The alerting rules load, and fire (or stay quiet) as their own promtool unit tests say.
TEST(AlertRules, LoadAndPassTheirUnitTests) {
  const std::string dir = GRIDCAST_PROMETHEUS_DIR;
  for (const std::vector<std::string>& check :
       {std::vector<std::string>{"promtool", "check", "rules", dir + "/gridcast-alerts.yml"},
        std::vector<std::string>{"sh", "-c", "cd '" + dir + "' && promtool test rules gridcast-alerts.test.yml"}}) {
    Result<CommandOutput> out = RunCommand(check);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->exit_code, 0) << out->output;
  }
}

}  // namespace
}  // namespace gridcast
