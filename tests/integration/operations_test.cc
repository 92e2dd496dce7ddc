// Operations: `--version` of both binaries, the client's GRIDCAST_CLUSTER, `gridcastd
// --check-config` on good and bad configurations (it binds nothing and changes nothing), and
// deploy/systemd/gridcastd.service checked by `systemd-analyze verify` where that is installed.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

TEST(MistypedFlag, TheDaemonNamesTheNearestOneAndStartsNothing) {
  Result<CommandOutput> out = RunCommand({GRIDCASTD, "--windw", "3"});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_EQ(out->output, "gridcastd: unknown option '--windw' (did you mean '--window'?) (see --help)\n");
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

// A daemon that cannot listen on its data port (another process holds it) says so and exits
// with an error; nothing it made is left half torn down (its sockets go before their io
// context: under AddressSanitizer that order is checked).
TEST_F(CheckConfigTest, ADataPortInUseIsAnErrorNotACrash) {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  // `timeout`: a daemon that started anyway would run until killed.
  Result<CommandOutput> out =
      RunCommand({"timeout", "60", GRIDCASTD, "--name", "n1", "--cluster", (dir_ / "cluster.yaml").string(),
                  "--data-dir", (dir_ / "data").string(), "--memory-dir", (dir_ / "memory").string(), "--control",
                  "unix:" + (dir_ / "n1.sock").string(), "--data", taken});
  close(holder);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->exit_code, 0) << out->output;
  EXPECT_NE(out->exit_code, 124) << "the daemon started on a port in use: " << out->output;
  EXPECT_NE(out->output.find(taken), std::string::npos) << out->output;
  EXPECT_EQ(out->output.find("Sanitizer"), std::string::npos) << out->output;
  EXPECT_EQ(out->output.find("runtime error"), std::string::npos) << out->output;
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

// Certificates made by `gridcast cluster init --tls`: the daemon's own passes; one of another
// cluster's CA, of another host, with another member's key, or for serving only is refused, a
// line for each problem naming its file.
TEST_F(CheckConfigTest, ACertificateIsCheckedAgainstItsCAItsHostsItsKeyAndItsUses) {
  Write("hosts.txt", "127.0.0.1 n1\n127.0.0.2 n2\n");
  for (const char* cluster : {"a", "b"}) {
    Result<CommandOutput> init = RunCommand({GRIDCAST_CLI, "cluster", "init", "--hosts", (dir_ / "hosts.txt").string(),
                                             "--tls", "-o", (dir_ / cluster).string()});
    ASSERT_TRUE(init.ok() && init->exit_code == 0) << (init.ok() ? init->output : init.status().ToString());
  }
  const std::string pki = (dir_ / "a/pki").string();
  auto tls = [&](const std::string& cert, const std::string& key, const std::string& ca) {
    return Check({"--name", "n1", "--tls-cert", cert, "--tls-key", key, "--tls-ca", ca});
  };
  const CommandOutput good = tls(pki + "/n1.pem", pki + "/n1.key", pki + "/ca.pem");
  EXPECT_EQ(good.exit_code, 0) << good.output;

  const CommandOutput other_ca = tls(pki + "/n1.pem", pki + "/n1.key", (dir_ / "b/pki/ca.pem").string());
  EXPECT_EQ(other_ca.exit_code, 2);
  EXPECT_NE(other_ca.output.find(pki + "/n1.pem: does not chain to the CA " + (dir_ / "b/pki/ca.pem").string()),
            std::string::npos)
      << other_ca.output;
  const CommandOutput other_host = tls(pki + "/n2.pem", pki + "/n2.key", pki + "/ca.pem");
  EXPECT_NE(other_host.output.find(pki + "/n2.pem: does not name 127.0.0.1"), std::string::npos) << other_host.output;
  // Two problems, two lines, each naming its file.
  const CommandOutput two = tls(pki + "/n1.pem", pki + "/n2.key", (dir_ / "b/pki/ca.pem").string());
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.output.find("gridcastd: " + pki + "/n2.key: not the key of " + pki + "/n1.pem\n"), std::string::npos)
      << two.output;
  EXPECT_NE(two.output.find("\ngridcastd: " + pki + "/n1.pem: does not chain to the CA"), std::string::npos)
      << two.output;

  // Signed by the cluster's CA, naming the host, but for serving only: a daemon also dials.
  Write("server-only.cnf", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  Result<CommandOutput> made = RunCommand(
      {"sh", "-ec",
       "cd " + dir_.string() + "\n" +
           "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout s.key -subj /CN=n1 "
           "-out s.csr 2>/dev/null\n"
           "openssl x509 -req -in s.csr -CA " + pki + "/ca.pem -CAkey " + pki +
           "/ca.key -CAcreateserial -days 1 -extfile server-only.cnf -out s.pem 2>/dev/null"});
  ASSERT_TRUE(made.ok() && made->exit_code == 0) << (made.ok() ? made->output : made.status().ToString());
  const CommandOutput serving = tls((dir_ / "s.pem").string(), (dir_ / "s.key").string(), pki + "/ca.pem");
  EXPECT_EQ(serving.exit_code, 2);
  EXPECT_NE(serving.output.find("s.pem: its extended key usage lacks clientAuth"), std::string::npos) << serving.output;
}

// `gridcast cluster add-host`: the member in the cluster file (still 0600) and the topology,
// and a certificate of the cluster's CA naming its host, its key 0600.
TEST_F(CheckConfigTest, AddHostAddsTheMemberAndIssuesItsCertificate) {
  Write("hosts.txt", "127.0.0.1 n1\n127.0.0.2 n2\n");
  const std::string cluster = (dir_ / "c").string();
  Result<CommandOutput> init =
      RunCommand({GRIDCAST_CLI, "cluster", "init", "--hosts", (dir_ / "hosts.txt").string(), "--tls", "-o", cluster});
  ASSERT_TRUE(init.ok() && init->exit_code == 0) << (init.ok() ? init->output : init.status().ToString());
  Result<CommandOutput> added =
      RunCommand({GRIDCAST_CLI, "cluster", "add-host", "127.0.0.3 n3", "--cluster", cluster + "/cluster.yaml"});
  ASSERT_TRUE(added.ok() && added->exit_code == 0) << (added.ok() ? added->output : added.status().ToString());
  auto mode = [](const fs::path& path) { return fs::status(path).permissions() & fs::perms::all; };
  EXPECT_EQ(mode(cluster + "/cluster.yaml"), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(mode(cluster + "/pki/n3.key"), fs::perms::owner_read | fs::perms::owner_write);
  std::ifstream file(cluster + "/cluster.yaml");
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_NE(text.str().find("  - name: n3\n    control: 127.0.0.3:7700\n    data: 127.0.0.3:7701"), std::string::npos)
      << text.str();
  std::ifstream topology(cluster + "/topology.yaml");
  std::stringstream nodes;
  nodes << topology.rdbuf();
  EXPECT_NE(nodes.str().find("n3"), std::string::npos) << nodes.str();
  // The CA issued it, for that host, as for the others.
  Result<CommandOutput> verified =
      RunCommand({"openssl", "verify", "-CAfile", cluster + "/pki/ca.pem", cluster + "/pki/n3.pem"});
  ASSERT_TRUE(verified.ok());
  EXPECT_EQ(verified->exit_code, 0) << verified->output;
  Result<CommandOutput> names = RunCommand({"openssl", "x509", "-noout", "-ext", "subjectAltName,extendedKeyUsage",
                                            "-in", cluster + "/pki/n3.pem"});
  ASSERT_TRUE(names.ok());
  EXPECT_NE(names->output.find("IP Address:127.0.0.3"), std::string::npos) << names->output;
  EXPECT_NE(names->output.find("TLS Web Client Authentication"), std::string::npos) << names->output;
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
