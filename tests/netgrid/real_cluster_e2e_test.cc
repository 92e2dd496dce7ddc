// docs/real-cluster.md followed literally, as an operator would, on four emulated hosts at two
// sites (a network namespace each): the installed layout (`cmake --install`), `gridcast cluster
// init --tls` from the hosts' addresses, the files copied to each host, a gridcastd per host
// started from its config file (flag-named keys, no name: it finds itself), `--check-config`
// (and it catching a certificate for another host), a send from inside a member (which becomes
// the source), status, list, remove, a new node added, --version, and a member that is down
// named unreachable.
//
// The blocks the document marks `<!-- run -->` are run as written; a host's /etc/gridcast,
// /var/lib/gridcast and /run/gridcast are directories of its own under the test's directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/netgrid.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = "/tmp/gridcast-real-cluster-e2e";

// The network: two sites of two hosts, named as the document's --sites expects.
constexpr const char* kTopology = R"(name: real-cluster
switches:
  - name: core
  - name: lyon
    parent: core
    uplink: 200mbit
  - name: nancy
    parent: core
    uplink: 100mbit
nodes:
  - switch: lyon
    names: [lyon-0, lyon-1]
    up: 200mbit
    down: 200mbit
  - switch: nancy
    names: [nancy-0, nancy-1]
    up: 200mbit
    down: 200mbit
)";

// The shell blocks that follow a `<!-- run -->` line, in order.
std::vector<std::string> RunBlocks(const fs::path& doc) {
  std::ifstream in(doc);
  std::vector<std::string> blocks;
  bool marked = false;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (inside) {
      if (line == "```") {
        inside = false;
      } else {
        blocks.back() += line + "\n";
      }
    } else if (line == "<!-- run -->") {
      marked = true;
    } else if (marked && line == "```sh") {
      blocks.emplace_back();
      inside = true;
      marked = false;
    }
  }
  return blocks;
}

class RealClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "netgrid needs root (network namespaces); not root";
    ASSERT_TRUE(NetgridDown(kRoot / "ng").ok());  // what a killed run left
    fs::remove_all(kRoot);
    fs::create_directories(kRoot / "admin");
    std::ofstream(kRoot / "topology.yaml") << kTopology;
    Result<CommandOutput> up = RunCommand({GRIDCAST_CLI, "netgrid", "up", (kRoot / "topology.yaml").string(),
                                           "--state", (kRoot / "ng").string()});
    ASSERT_TRUE(up.ok() && up->exit_code == 0) << (up.ok() ? up->output : up.status().message());
    Result<NetgridState> state = LoadNetgridState(kRoot / "ng");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    state_ = *state;
    // Installed as a node would have it (the package holds the same files).
    const CommandOutput installed = Run("cmake --install " + ShellQuote(GRIDCAST_BUILD_DIR) + " --prefix " +
                                        ShellQuote((kRoot / "prefix").string()) + " >/dev/null");
    ASSERT_EQ(installed.exit_code, 0) << installed.output;
  }
  void TearDown() override {
    if (geteuid() != 0) return;
    for (auto& [node, daemon] : daemons_) daemon.Stop(SIGTERM);
    EXPECT_TRUE(NetgridDown(kRoot / "ng").ok());
    fs::remove_all(kRoot);
  }

  // `line` through sh -e, inside `node`'s namespace (the admin machine when empty), from the
  // admin directory, with the installed programs first in PATH and NODE set.
  CommandOutput Run(const std::string& line, const std::string& node = "") const {
    std::vector<std::string> argv;
    if (!node.empty()) argv = {"ip", "netns", "exec", Node(node).netns};
    const std::string path = (kRoot / "prefix" / "bin").string() + ":" + (getenv("PATH") ? getenv("PATH") : "");
    argv.insert(argv.end(), {"env", "PATH=" + path, "NODE=" + node, "ASAN_OPTIONS=detect_leaks=0", "sh", "-ec",
                             "cd " + ShellQuote((kRoot / "admin").string()) + "\n" + line});
    Result<CommandOutput> out = RunCommand(argv);
    return out.ok() ? *out : CommandOutput{-1, out.status().ToString()};
  }
  // `text` with /etc/gridcast, /var/lib/gridcast and /run/gridcast as `node`'s own directories.
  static std::string OwnDirectories(const std::string& node, std::string text) {
    for (const char* dir : {"/etc/gridcast", "/var/lib/gridcast", "/run/gridcast"}) {
      const std::string own = (kRoot / node / fs::path(dir).relative_path()).string();
      for (size_t at = text.find(dir); at != std::string::npos; at = text.find(dir, at + own.size())) {
        text.replace(at, std::string(dir).size(), own);
      }
    }
    return text;
  }
  // A block of the document as `node` runs it.
  CommandOutput RunOn(const std::string& node, const std::string& block) const {
    return Run(OwnDirectories(node, block), node);
  }
  const NetgridNode& Node(const std::string& name) const {
    const NetgridNode* node = state_.FindNode(name);
    EXPECT_NE(node, nullptr) << name;
    return *node;
  }
  void StartDaemon(const std::string& node) {
    const fs::path config = kRoot / node / "etc/gridcast/gridcastd.yaml";
    Result<ChildProcess> daemon =
        ChildProcess::Start({"ip", "netns", "exec", Node(node).netns, "env", "ASAN_OPTIONS=detect_leaks=0",
                             (kRoot / "prefix/bin/gridcastd").string(), "--config", config.string()},
                            (kRoot / (node + ".log")).string());
    ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
    daemons_.emplace(node, std::move(*daemon));
  }

  NetgridState state_;
  std::map<std::string, ChildProcess> daemons_;
};

// Stays whole: the document's steps, one after the other, as an operator runs them.
TEST_F(RealClusterTest, TheDocumentFollowedLiterallyGivesAVerifiedSendAtTwoSites) {
  const std::vector<std::string> blocks = RunBlocks(fs::path(GRIDCAST_DOCS_DIR) / "real-cluster.md");
  ASSERT_EQ(blocks.size(), 7u) << "docs/real-cluster.md's <!-- run --> blocks changed: change this test with them";
  const std::string& init = blocks[0];
  const std::string& copy = blocks[1];
  const std::string& check = blocks[2];
  const std::string& send = blocks[3];
  const std::string& watch = blocks[4];
  const std::string& add_host = blocks[5];
  const std::string& versions = blocks[6];
  const std::vector<std::string> nodes = {"lyon-0", "lyon-1", "nancy-0", "nancy-1"};

  // The admin machine: the hosts' addresses, named (addresses need names).
  std::ofstream hosts(kRoot / "admin/hosts.txt");
  for (const std::string& node : nodes) hosts << Node(node).address << " " << node << "\n";
  hosts.close();
  CommandOutput out = Run(init);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("4 members at lyon (2), nancy (2)"), std::string::npos) << out.output;
  EXPECT_EQ(fs::status(kRoot / "admin/gridcast-cluster/cluster.yaml").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  for (const std::string& node : nodes) {
    SCOPED_TRACE(node);
    out = RunOn(node, copy);
    ASSERT_EQ(out.exit_code, 0) << out.output;
    // The package's /etc/gridcast/gridcastd.yaml, unchanged but for where this host's directories are.
    std::ifstream shipped(kRoot / "prefix/etc/gridcast/gridcastd.yaml");
    std::stringstream config;
    config << shipped.rdbuf();
    std::ofstream(kRoot / node / "etc/gridcast/gridcastd.yaml") << OwnDirectories(node, config.str());
    out = RunOn(node, check);
    ASSERT_EQ(out.exit_code, 0) << out.output;
    EXPECT_NE(out.output.find("configuration OK: member " + node + " of 4 members"), std::string::npos) << out.output;
    EXPECT_NE(out.output.find("; TLS"), std::string::npos) << out.output;
  }

  // A certificate for another host is caught, naming the file and this host's address.
  const fs::path pki = kRoot / "lyon-1/etc/gridcast/pki";
  fs::rename(pki / "lyon-1.pem", pki / "lyon-1.pem.kept");
  fs::rename(pki / "lyon-1.key", pki / "lyon-1.key.kept");
  fs::copy_file(kRoot / "admin/gridcast-cluster/pki/lyon-0.pem", pki / "lyon-1.pem");
  fs::copy_file(kRoot / "admin/gridcast-cluster/pki/lyon-0.key", pki / "lyon-1.key");
  out = RunOn("lyon-1", check);
  EXPECT_NE(out.exit_code, 0);
  EXPECT_NE(out.output.find("lyon-1.pem: does not name " + Node("lyon-1").address), std::string::npos) << out.output;
  fs::rename(pki / "lyon-1.pem.kept", pki / "lyon-1.pem");
  fs::rename(pki / "lyon-1.key.kept", pki / "lyon-1.key");

  for (const std::string& node : nodes) StartDaemon(node);
  // Up once every member answers.
  for (int attempt = 0;; ++attempt) {
    out = RunOn("lyon-0", "gridcast status --cluster /etc/gridcast/cluster.yaml");
    if (out.exit_code == 0 || attempt == 100) break;
    usleep(100'000);
  }
  ASSERT_EQ(out.exit_code, 0) << out.output;

  // From inside lyon-1 (not the topology's first node): lyon-1 is the source.
  out = RunOn("lyon-1", send);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find(" from lyon-1 to "), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("OK: every member holds a verified copy"), std::string::npos) << out.output;
  for (const std::string& node : nodes) {
    out = Run("cmp " + (kRoot / "lyon-1/var/lib/gridcast/data/dataset.bin").string() + " " +
              (kRoot / node / "var/lib/gridcast/data/dataset.bin").string());
    EXPECT_EQ(out.exit_code, 0) << node << ": " << out.output;
  }

  out = RunOn("nancy-0", watch);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  for (const std::string& node : nodes) EXPECT_NE(out.output.find(node), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("dataset.bin"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("dataset.bin removed at 4 member(s)"), std::string::npos) << out.output;
  for (const std::string& node : nodes) {
    EXPECT_FALSE(fs::exists(kRoot / node / "var/lib/gridcast/data/dataset.bin")) << node;
  }

  // A new node, on the admin machine: in the cluster file (still 0600) with a certificate.
  out = Run(add_host);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("lyon-2 (lyon-2.grid.example.org) added"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("5 members"), std::string::npos) << out.output;
  EXPECT_TRUE(fs::exists(kRoot / "admin/gridcast-cluster/pki/lyon-2.pem"));
  EXPECT_EQ(fs::status(kRoot / "admin/gridcast-cluster/cluster.yaml").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  out = RunOn("lyon-0", versions);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("gridcast 0."), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("gridcastd 0."), std::string::npos) << out.output;

  // A member that is down: the send fails at once, naming it unreachable.
  daemons_.at("nancy-1").Stop(SIGTERM);
  daemons_.erase("nancy-1");
  out = RunOn("lyon-0", "head -c 1M /dev/urandom > /var/lib/gridcast/data/small.bin\n"
                        "gridcast send /var/lib/gridcast/data/small.bin --cluster /etc/gridcast/cluster.yaml --timeout 60");
  EXPECT_NE(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("member 'nancy-1' is unreachable at " + Node("nancy-1").address + ":7700"),
            std::string::npos)
      << out.output;
}

}  // namespace
}  // namespace gridcast
