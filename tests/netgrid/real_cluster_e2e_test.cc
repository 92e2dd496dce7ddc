// docs/real-cluster.md followed literally, as an operator would, on four emulated hosts at two
// sites (a network namespace each): the Debian package made from this build (`cpack`) and
// installed on this machine with apt, `gridcast cluster init --tls` from the hosts' addresses,
// the files copied to each host and given to the service's group, `--check-config` (and it
// catching a certificate for another host), a gridcastd per host started as the installed unit
// starts it (its user, umask, directories and ExecStartPre/ExecStart lines, config with
// flag-named keys and no name: it finds itself), a send from inside a member (which becomes the
// source), status, list, remove, a new node added, an upgrade to a newer package that keeps the
// node's edited configuration, --version, and a member that is down named unreachable.
//
// The blocks the document marks `<!-- run -->` are run as written; a host's /etc/gridcast,
// /var/lib/gridcast and /run/gridcast are directories of its own under the test's directory.
// The hosts share this machine's file system, so the package is installed once for all of them,
// and purged at the end (by the cleanup step too, when the test was killed). systemd is not
// what runs here (no `systemctl`): the unit's lines are read and run as it would run them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
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
// Present while this test's package is installed: a killed run's cleanup purges it.
const fs::path kInstalledByTest = kRoot / "installed-by-test";

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
    for (const char* tool : {"apt-get", "dpkg-query", "cpack", "setpriv"}) {
      if (Run("command -v " + std::string(tool)).exit_code != 0) GTEST_SKIP() << "no " << tool << " here";
    }
    if (Run("dpkg-query -W gridcast").exit_code == 0) {
      // Ours when a killed run left it; anyone else's is not this test's to replace.
      if (!fs::exists(kInstalledByTest)) GTEST_SKIP() << "gridcast is installed on this machine: not replacing it";
      ASSERT_EQ(Run("apt-get purge -y -q gridcast").exit_code, 0);
    }
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
    // The package as docs/real-cluster.md makes it (its programs in /usr/bin), from this build,
    // and a newer one to upgrade to: the same build, its version one Debian revision later,
    // with the first one's Depends (dpkg-shlibdeps over the sanitized binaries takes 45 s).
    ASSERT_NO_FATAL_FAILURE(MakePackage(kRoot / "admin", ""));
    const CommandOutput version = Run("dpkg-deb -f gridcast_*_amd64.deb Version");
    ASSERT_EQ(version.exit_code, 0) << version.output;
    upgrade_version_ = version.output.substr(0, version.output.find('\n')) + "+1";
    const CommandOutput depends = Run("dpkg-deb -f gridcast_*_amd64.deb Depends");
    ASSERT_EQ(depends.exit_code, 0) << depends.output;
    ASSERT_NE(depends.output.find("libc6"), std::string::npos) << depends.output;
    const std::string same_depends = " -D CPACK_DEBIAN_PACKAGE_SHLIBDEPS=OFF -D CPACK_DEBIAN_PACKAGE_DEPENDS=" +
                                     ShellQuote(depends.output.substr(0, depends.output.find('\n')));
    ASSERT_NO_FATAL_FAILURE(MakePackage(kRoot / "upgrade", " -D CPACK_PACKAGE_VERSION=" + upgrade_version_ + same_depends));
  }
  // `cpack` of this build into `dir`, for the prefix /usr, with `flags` added (-D ...).
  void MakePackage(const fs::path& dir, const std::string& flags) const {
    const CommandOutput made = Run("cpack -G DEB --config " + ShellQuote(GRIDCAST_BUILD_DIR "/CPackConfig.cmake") +
                                   " -D CPACK_PACKAGING_INSTALL_PREFIX=/usr" + flags + " -B " +
                                   ShellQuote(dir.string()) + " >/dev/null");
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  void TearDown() override {
    if (geteuid() != 0) return;
    for (auto& [node, daemon] : daemons_) daemon.Stop(SIGTERM);
    daemons_.clear();
    EXPECT_TRUE(NetgridDown(kRoot / "ng").ok());
    if (fs::exists(kInstalledByTest)) {
      const CommandOutput purged = Run("apt-get purge -y -q gridcast");
      EXPECT_EQ(purged.exit_code, 0) << purged.output;
      EXPECT_NE(Run("dpkg-query -W gridcast").exit_code, 0);
    }
    fs::remove_all(kRoot);
  }

  // `line` through sh -e, inside `node`'s namespace (the admin machine when empty), from the
  // admin directory, with NODE set.
  CommandOutput Run(const std::string& line, const std::string& node = "") const {
    std::vector<std::string> argv;
    if (!node.empty()) argv = {"ip", "netns", "exec", Node(node).netns};
    argv.insert(argv.end(), {"env", "NODE=" + node, "ASAN_OPTIONS=detect_leaks=0", "sh", "-ec",
                             "cd " + ShellQuote((kRoot / "admin").string()) + " 2>/dev/null || true\n" + line});
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
  // Started as the installed unit starts it: systemd's directories for it (StateDirectory=,
  // RuntimeDirectory= with their modes, owned by its user), its ExecStartPre= (the check) and
  // ExecStart= as its User= and Group= with its UMask=.
  void StartDaemon(const std::string& node) {
    std::map<std::string, std::string> unit;
    std::ifstream unit_file(kUnit);
    for (std::string line; std::getline(unit_file, line);) {
      const size_t equals = line.find('=');
      if (!line.starts_with("#") && equals != std::string::npos) unit[line.substr(0, equals)] = line.substr(equals + 1);
    }
    for (const char* key : {"User", "Group", "UMask", "ExecStartPre", "ExecStart", "StateDirectory",
                            "StateDirectoryMode", "RuntimeDirectory", "RuntimeDirectoryMode"}) {
      ASSERT_TRUE(unit.contains(key)) << kUnit << " sets no " << key;
    }
    const std::string owner = "-o " + unit["User"] + " -g " + unit["Group"];
    const CommandOutput made = RunOn(
        node, "install -d " + owner + " -m " + unit["StateDirectoryMode"] + " /var/lib/" + unit["StateDirectory"] +
                  "\ninstall -d " + owner + " -m " + unit["RuntimeDirectoryMode"] + " /run/" + unit["RuntimeDirectory"]);
    ASSERT_EQ(made.exit_code, 0) << made.output;
    const std::string as_the_service = "umask " + unit["UMask"] + "; exec setpriv --reuid=" + unit["User"] +
                                       " --regid=" + unit["Group"] + " --init-groups env ASAN_OPTIONS=detect_leaks=0 ";
    const CommandOutput checked = RunOn(node, "(" + as_the_service + unit["ExecStartPre"] + ")");
    ASSERT_EQ(checked.exit_code, 0) << checked.output;
    Result<ChildProcess> daemon =
        ChildProcess::Start({"ip", "netns", "exec", Node(node).netns, "sh", "-c",
                             as_the_service + OwnDirectories(node, unit["ExecStart"])},
                            (kRoot / (node + ".log")).string());
    ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
    daemons_.emplace(node, std::move(*daemon));
  }
  // Until every member answers `status` from `node`.
  void ExpectEveryMemberUp(const std::string& node) {
    CommandOutput out;
    for (int attempt = 0;; ++attempt) {
      out = RunOn(node, "gridcast status --cluster /etc/gridcast/cluster.yaml");
      if (out.exit_code == 0 || attempt == 100) break;
      usleep(100'000);
    }
    if (out.exit_code == 0) return;
    std::string logs;
    for (const auto& [name, daemon] : daemons_) {
      std::ifstream log(kRoot / (name + ".log"));
      logs += "--- " + name + "'s log:\n" + std::string(std::istreambuf_iterator<char>(log), {});
    }
    ADD_FAILURE() << out.output << logs;
  }

  static constexpr const char* kUnit = "/usr/lib/systemd/system/gridcastd.service";
  NetgridState state_;
  std::map<std::string, ChildProcess> daemons_;
  std::string upgrade_version_;  // the newer package's
};

// The package's /etc/gridcast/gridcastd.yaml, read from where apt put it.
std::string InstalledConfig() {
  std::ifstream shipped("/etc/gridcast/gridcastd.yaml");
  std::stringstream config;
  config << shipped.rdbuf();
  return config.str();
}

// Stays whole: the document's steps, one after the other, as an operator runs them.
TEST_F(RealClusterTest, TheDocumentFollowedLiterallyGivesAVerifiedSendAtTwoSites) {
  const std::vector<std::string> blocks = RunBlocks(fs::path(GRIDCAST_DOCS_DIR) / "real-cluster.md");
  ASSERT_EQ(blocks.size(), 9u) << "docs/real-cluster.md's <!-- run --> blocks changed: change this test with them";
  const std::string& install = blocks[0];
  const std::string& init = blocks[1];
  const std::string& copy = blocks[2];
  const std::string& give_to_group = blocks[3];
  const std::string& check = blocks[4];
  const std::string& send = blocks[5];
  const std::string& watch = blocks[6];
  const std::string& add_host = blocks[7];
  const std::string& versions = blocks[8];
  const std::vector<std::string> nodes = {"lyon-0", "lyon-1", "nancy-0", "nancy-1"};

  // Installed with apt from the package's file, as the document names it (the hosts share this
  // machine's file system: once is on every node).
  std::ofstream(kInstalledByTest) << "apt-get purge gridcast\n";
  CommandOutput out = Run(install);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(Run("dpkg-query -W gridcast").output.find("gridcast\t0."), std::string::npos);
  EXPECT_EQ(Run("getent group gridcast && getent passwd gridcast").exit_code, 0) << "no service user and group";
  for (const char* program : {"/usr/bin/gridcast", "/usr/bin/gridcastd"}) EXPECT_TRUE(fs::exists(program)) << program;
  // The library as the system's: pkg-config finds it without being told where, and a C program
  // built against the installed headers and library alone (it sends a buffer once the daemons
  // run).
  EXPECT_NE(Run("pkg-config --libs gridcast").output.find("-lgridcast"), std::string::npos);
  out = Run("cc " GRIDCAST_SANITIZE_FLAGS " -o send_buffer " GRIDCAST_SEND_BUFFER_C
            " $(pkg-config --cflags --libs gridcast)");
  EXPECT_EQ(out.exit_code, 0) << out.output;

  // The admin machine: the hosts' addresses, named (addresses need names).
  std::ofstream hosts(kRoot / "admin/hosts.txt");
  for (const std::string& node : nodes) hosts << Node(node).address << " " << node << "\n";
  hosts.close();
  out = Run(init);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("4 members at lyon (2), nancy (2)"), std::string::npos) << out.output;
  EXPECT_EQ(fs::status(kRoot / "admin/gridcast-cluster/cluster.yaml").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  for (const std::string& node : nodes) {
    SCOPED_TRACE(node);
    // Each host's /etc/gridcast holds the package's gridcastd.yaml before the files arrive.
    fs::create_directories(kRoot / node / "etc/gridcast");
    std::ofstream(kRoot / node / "etc/gridcast/gridcastd.yaml") << OwnDirectories(node, InstalledConfig());
    out = RunOn(node, copy + give_to_group);
    ASSERT_EQ(out.exit_code, 0) << out.output;
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
  ExpectEveryMemberUp("lyon-0");

  out = RunOn("lyon-0", "./send_buffer /etc/gridcast/cluster.yaml lyon-0 nancy-1");
  EXPECT_NE(out.output.find("nancy-1's copy is the buffer"), std::string::npos) << out.output;

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

  // An upgrade: the newer package over the installed one keeps the configuration the node
  // edited (a conffile) and the service's user; each daemon restarted in turn, then a send.
  std::ofstream("/etc/gridcast/gridcastd.yaml", std::ios::app) << "# edited on this node\n";
  out = Run("cd ../upgrade && apt-get install -q ./gridcast_" + upgrade_version_ + "_amd64.deb");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(Run("dpkg-query -W gridcast").output, "gridcast\t" + upgrade_version_ + "\n");
  EXPECT_NE(InstalledConfig().find("# edited on this node"), std::string::npos) << "the upgrade replaced it";
  EXPECT_EQ(Run("getent passwd gridcast").exit_code, 0);
  for (const std::string& node : nodes) {
    daemons_.at(node).Stop(SIGTERM);
    daemons_.erase(node);
    StartDaemon(node);
    ExpectEveryMemberUp(node);
  }
  out = RunOn("nancy-1", "head -c 4M /dev/urandom > /var/lib/gridcast/data/after-upgrade.bin\n"
                         "gridcast send /var/lib/gridcast/data/after-upgrade.bin --cluster /etc/gridcast/cluster.yaml");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("OK: every member holds a verified copy"), std::string::npos) << out.output;

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
  // And so do status, list and remove, beside the members that answer.
  out = RunOn("lyon-0", watch);
  EXPECT_NE(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("error: member 'nancy-1' is unreachable at " + Node("nancy-1").address + ":7700"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("lyon-1 "), std::string::npos) << out.output;
}

}  // namespace
}  // namespace gridcast
