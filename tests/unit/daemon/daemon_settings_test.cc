#include "daemon/daemon_settings.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/cluster_file.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

class DaemonSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gridcast-settings-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    ClusterConfig cluster;
    cluster.secret = std::string(32, 's');
    cluster.members = {{"a", "unix:/tmp/a.sock", "127.0.0.1:7701", "127.0.0.1:7702"},
                       {"b", "unix:/tmp/b.sock", "127.0.0.1:7711", "127.0.0.1:7712"}};
    std::ofstream(dir_ / "cluster.yaml") << FormatClusterFile(cluster);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteConfig(const std::string& text) {
    const fs::path path = dir_ / "daemon.yaml";
    std::ofstream(path) << text;
    return path.string();
  }

  // Parses `args` (after the program name) and the config file they name, then builds the
  // options. The status of the first step that fails.
  Status Load(std::vector<std::string> args, DaemonOptions* options, DaemonSettings* settings_out = nullptr) {
    CLI::App app("test");
    DaemonSettings settings;
    SettingsTable table(app, settings);
    std::vector<std::string> argv = {"gridcastd"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    try {
      app.parse(static_cast<int>(raw.size()), raw.data());
    } catch (const CLI::ParseError& e) {
      return Status::InvalidArgument(e.what());
    }
    GRIDCAST_RETURN_IF_ERROR(table.ApplyConfigFile());
    if (settings_out != nullptr) *settings_out = settings;
    return BuildDaemonOptions(settings, options);
  }

  std::string cluster() const { return (dir_ / "cluster.yaml").string(); }
  fs::path dir_;
};

TEST_F(DaemonSettingsTest, DefaultsComeFromTheClusterFileAndTheOptions) {
  DaemonOptions options;
  ASSERT_TRUE(Load({"--name", "b", "--cluster", cluster()}, &options).ok());
  EXPECT_EQ(options.name, "b");
  EXPECT_EQ(options.data_dir, "/var/lib/gridcast/b");
  EXPECT_EQ(options.control_address, "unix:/tmp/b.sock");
  EXPECT_EQ(options.data_address, "127.0.0.1:7711");
  EXPECT_EQ(options.torrents.listen_address, "127.0.0.1:7712");
  EXPECT_EQ(options.execution.window_chunks, ExecutionOptions{}.window_chunks);
  EXPECT_EQ(options.execution.io_timeout, ExecutionOptions{}.io_timeout);
  EXPECT_EQ(options.tcp.congestion, "cubic");
  EXPECT_EQ(options.execution.secret, std::string(32, 's'));
}

TEST_F(DaemonSettingsTest, TheConfigFileFillsWhatFlagsLeaveAndFlagsWin) {
  const std::string config = WriteConfig(
      "name: a\n"
      "cluster: " + cluster() + "\n"
      "window_chunks: 3\n"
      "io_timeout_s: 600\n"
      "member_lost_after: 12.5\n"
      "fsync: true\n"
      "parent_silent: 2.5\n"
      "tcp_congestion: system\n"
      "send_roots: [/srv/x, /srv/y]\n"
      "data: 127.0.0.1:9000\n");
  DaemonOptions options;
  ASSERT_TRUE(Load({"--config", config, "--window", "5", "--data", "127.0.0.1:9100"}, &options).ok());
  EXPECT_EQ(options.name, "a");
  EXPECT_EQ(options.execution.window_chunks, 5u);                       // the flag
  EXPECT_EQ(options.data_address, "127.0.0.1:9100");                    // the flag
  EXPECT_EQ(options.execution.io_timeout, std::chrono::seconds(600));   // the file
  EXPECT_EQ(options.member_lost_after, std::chrono::milliseconds(12500));
  EXPECT_TRUE(options.execution.sync_on_finish);
  EXPECT_EQ(options.execution.parent_silent, std::chrono::milliseconds(2500));
  EXPECT_TRUE(options.tcp.congestion.empty());                // "system"
  EXPECT_EQ(options.send_roots, (std::vector<std::string>{"/srv/x", "/srv/y"}));
}

// Every key a config file could hold before the settings were declared once still loads.
TEST_F(DaemonSettingsTest, EveryDocumentedKeyLoads) {
  const std::string config = WriteConfig(
      "name: a\ncluster: " + cluster() + "\ndata_dir: /tmp/d\nmemory_dir: /tmp/m\n"
      "control: unix:/tmp/c.sock\ndata: 127.0.0.1:1\nsend_roots: [/tmp]\nwindow_chunks: 4\n"
      "cache_chunks: 16\nworkers: 2\ncontrol_fanout: 4\npage_cache_window: 32MiB\n"
      "io_timeout_s: 30\ntcp_congestion: reno\nfsync: false\nlog_level: debug\n"
      "tls_cert: c.pem\ntls_key: k.pem\ntls_ca: ca.pem\nbt: 127.0.0.1:2\nbt_defaults: true\n"
      "swarm_stall_s: 5\nstall_timeout_s: 90\nbt_upload_slots: 8\n");
  DaemonOptions options;
  Status status = Load({"--config", config}, &options);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(options.execution.page_cache_window_bytes, uint64_t{32} << 20);
  EXPECT_EQ(options.control_fanout, 4u);
  EXPECT_EQ(options.workers, 2u);
  EXPECT_EQ(options.tcp.congestion, "reno");
  EXPECT_EQ(options.torrents.stall_timeout, std::chrono::seconds(5));
  EXPECT_EQ(options.stall_timeout, std::chrono::seconds(90));
  EXPECT_TRUE(options.torrents.libtorrent_defaults);
  EXPECT_EQ(options.torrents.upload_slots, 8);
}

// A map's keys join their parent's: retention: {max_age, max_bytes, memory_max_bytes}.
TEST_F(DaemonSettingsTest, RetentionAsFlagsOrAsAMap) {
  DaemonOptions options;
  ASSERT_TRUE(Load({"--name", "a", "--cluster", cluster(), "--retention-max-age", "7d", "--retention-max-bytes", "2TiB"},
                   &options)
                  .ok());
  EXPECT_EQ(options.data_retention.max_age, std::chrono::seconds(7 * 86400));
  EXPECT_EQ(options.memory_retention.max_age, std::chrono::seconds(7 * 86400));
  EXPECT_EQ(options.data_retention.max_bytes, uint64_t{2} << 40);
  EXPECT_EQ(options.memory_retention.max_bytes, 0u);

  DaemonOptions from_file;
  const Status loaded = Load({"--config", WriteConfig("name: a\ncluster: " + cluster() +
                                                      "\nretention:\n  max_age: 12h\n  memory_max_bytes: 16GiB\n")},
                             &from_file);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(from_file.data_retention.max_age, std::chrono::seconds(12 * 3600));
  EXPECT_EQ(from_file.data_retention.max_bytes, 0u);
  EXPECT_EQ(from_file.memory_retention.max_bytes, uint64_t{16} << 30);

  DaemonOptions none;
  ASSERT_TRUE(Load({"--name", "a", "--cluster", cluster()}, &none).ok());
  EXPECT_FALSE(none.data_retention.any());
  EXPECT_FALSE(none.memory_retention.any());
}

// Every key is its flag's name without the dashes, as deploy/systemd/gridcastd.yaml says; the old
// keys still load, each with a note saying the new name.
TEST_F(DaemonSettingsTest, KeysAreTheFlagsNamesAndOldKeysGetANote) {
  const std::string config = WriteConfig(
      "name: a\ncluster: " + cluster() + "\ndata-dir: /tmp/d\nsend_root: /srv/one\nwindow: 4\n"
      "io_timeout: 30\nstall-timeout: 90\nswarm_stall: 5\npage_cache_window: 32MiB\n");
  CLI::App app("test");
  DaemonSettings settings;
  SettingsTable table(app, settings);
  std::vector<std::string> argv = {"gridcastd", "--config", config};
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  app.parse(static_cast<int>(raw.size()), raw.data());
  ASSERT_TRUE(table.ApplyConfigFile().ok());
  EXPECT_TRUE(table.notes().empty());
  DaemonOptions options;
  ASSERT_TRUE(BuildDaemonOptions(settings, &options).ok());
  EXPECT_EQ(options.data_dir, "/tmp/d");
  EXPECT_EQ(options.send_roots, (std::vector<std::string>{"/srv/one"}));
  EXPECT_EQ(options.execution.window_chunks, 4u);
  EXPECT_EQ(options.execution.io_timeout, std::chrono::seconds(30));
  EXPECT_EQ(options.stall_timeout, std::chrono::seconds(90));
  EXPECT_EQ(options.torrents.stall_timeout, std::chrono::seconds(5));

  CLI::App old_app("test");
  DaemonSettings old_settings;
  SettingsTable old_table(old_app, old_settings);
  const std::string old_config = WriteConfig("window_chunks: 4\nio_timeout_s: 30\n");
  std::vector<std::string> old_argv = {"gridcastd", "--config", old_config};
  std::vector<char*> old_raw;
  for (std::string& a : old_argv) old_raw.push_back(a.data());
  old_app.parse(static_cast<int>(old_raw.size()), old_raw.data());
  ASSERT_TRUE(old_table.ApplyConfigFile().ok());
  ASSERT_EQ(old_table.notes().size(), 2u);
  EXPECT_NE(old_table.notes()[0].find("line 1: 'window_chunks' is the old name of 'window'"), std::string::npos)
      << old_table.notes()[0];
  EXPECT_EQ(old_settings.window_chunks, 4u);
}

// The example the systemd unit ships loads, its commented settings too.
TEST_F(DaemonSettingsTest, TheShippedConfigLoadsWithEveryExampleUncommented) {
  std::ifstream in(std::string(GRIDCAST_DEPLOY_DIR) + "/systemd/gridcastd.yaml");
  std::string text;
  for (std::string line; std::getline(in, line);) {
    // "# key: value" (a key of lower-case letters and '_'), not prose.
    const size_t colon = line.find(": ");
    const bool setting = line.rfind("# ", 0) == 0 && colon != std::string::npos && colon > 2 &&
                         std::all_of(line.begin() + 2, line.begin() + static_cast<std::ptrdiff_t>(colon),
                                     [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
    if (setting) line = line.substr(2);
    text += line + "\n";
  }
  ASSERT_NE(text.find("\nwindow: 16"), std::string::npos) << text;
  CLI::App app("test");
  DaemonSettings settings;
  SettingsTable table(app, settings);
  std::vector<std::string> argv = {"gridcastd", "--config", WriteConfig(text)};
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  app.parse(static_cast<int>(raw.size()), raw.data());
  const Status applied = table.ApplyConfigFile();
  EXPECT_TRUE(applied.ok()) << applied.message();
  EXPECT_TRUE(table.notes().empty());
  EXPECT_EQ(settings.window_chunks, 16u);
  EXPECT_EQ(settings.metrics, "10.1.0.1:9464");
}

// docs/daemon-settings.md holds the table gridcastd --settings-reference prints: it cannot
// drift from the flags.
TEST_F(DaemonSettingsTest, TheSettingsReferenceInTheDocsIsTheFlagsOwn) {
  CLI::App app("test");
  DaemonSettings settings;
  SettingsTable table(app, settings);
  const std::string reference = table.Reference();
  std::ifstream in(std::string(GRIDCAST_DOCS_DIR) + "/daemon-settings.md");
  std::stringstream docs;
  docs << in.rdbuf();
  EXPECT_NE(docs.str().find(reference), std::string::npos)
      << "docs/daemon-settings.md is out of date: regenerate its table with gridcastd --settings-reference:\n"
      << reference;
  for (const CLI::Option* option : app.get_options()) {
    const std::string flag = option->get_name();
    if (flag == "--help" || flag == "--config") continue;
    EXPECT_NE(reference.find("`" + flag + "`"), std::string::npos) << flag;
  }
}

TEST_F(DaemonSettingsTest, BadInputIsNamed) {
  struct Case {
    std::vector<std::string> args;
    std::string config;     // written and passed with --config when not empty
    std::string expected;   // in the message
  };
  const std::string c = cluster();
  const std::vector<Case> cases = {
      {{"--cluster", c}, "", "several members have an address of this host (a, b): set --name"},
      {{"--name", "a"}, "", "--cluster is required"},
      {{"--name", "zz", "--cluster", c}, "", "'zz' is not a member"},
      {{"--name", "a", "--cluster", (dir_ / "missing.yaml").string()}, "", "cannot read cluster file"},
      {{"--name", "a", "--cluster", c, "--window", "0"}, "", "--window: at least 1"},
      {{"--name", "a", "--cluster", c, "--io-timeout", "-1"}, "", "--io-timeout: seconds"},
      {{"--name", "a", "--cluster", c, "--io-timeout", "1e300"}, "", "--io-timeout: seconds"},
      {{"--name", "a", "--cluster", c, "--stall-timeout", "nan"}, "", "--stall-timeout: seconds"},
      {{"--name", "a", "--cluster", c, "--swarm-stall", "nan"}, "", "--swarm-stall: seconds"},
      {{"--name", "a", "--cluster", c, "--parent-silent", "0.1"}, "", "--parent-silent: at least 0.2 seconds"},
      {{"--name", "a", "--cluster", c, "--parent-silent", "7200"}, "", "--parent-silent: seconds from 0 to 3600"},
      {{"--name", "a", "--cluster", c, "--control-fanout", "5000"}, "", "--control-fanout: at most 1024"},
      {{"--name", "a", "--cluster", c, "--page-cache-window", "lots"}, "", "--page-cache-window"},
      {{"--name", "a", "--cluster", c, "--tcp-congestion", "cu bic"}, "", "--tcp-congestion: 'cu bic'"},
      {{"--name", "a", "--cluster", c, "--log-level", "loud"}, "", "--log-level: 'loud'"},
      {{"--name", "a", "--cluster", c, "--bt-upload-slots", "0"}, "", "--bt-upload-slots: -1"},
      {{"--name", "a", "--cluster", c, "--bt-upload-slots", "-2"}, "", "--bt-upload-slots: -1"},
      {{"--name", "a", "--cluster", c, "--tls-cert", "c.pem"}, "", "--tls-cert and --tls-key go together"},
      {{"--name", "a", "--cluster", c, "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "", "--tls-cert needs the cluster's CA"},
      {{"--name", "a", "--cluster", c}, "window_chunks: 2\nwindow_chunk: 3\n", "line 2: unknown field 'window_chunk'"},
      {{"--name", "a", "--cluster", c}, "window_chunks: many\n", "line 1: 'window' takes a whole number, not 'many'"},
      {{"--name", "a", "--cluster", c}, "io_timeout: [1]\n", "'io_timeout' takes a number, not a list"},
      {{"--name", "a", "--cluster", c}, "fsync: sometimes\n", "'fsync' takes true or false"},
      {{"--name", "a", "--cluster", c}, "windw: 3\n", "unknown field 'windw' (did you mean 'window'?)"},
      {{"--name", "a", "--cluster", c}, "io_timeout_: 3\n", "(did you mean 'io_timeout'?)"},
      {{"--name", "a", "--cluster", c}, "colour: blue\n", "unknown field 'colour'; docs/daemon-settings.md"},
      {{"--name", "a", "--cluster", c}, "window: 2\nwindow_chunks: 3\n", "'window' is given twice"},
      {{"--name", "a", "--cluster", c}, "[1, 2]\n", "not a map of settings"},
      {{"--name", "a", "--cluster", c, "--retention-max-age", "soon"}, "", "--retention-max-age: 'soon'"},
      {{"--name", "a", "--cluster", c, "--retention-max-age", "0.5s"}, "", "an age of a second or more"},
      {{"--name", "a", "--cluster", c}, "retention:\n  max_bytes: 0\n", "--retention-max-bytes: '0'"},
      {{"--name", "a", "--cluster", c}, "retention:\n  max_byte: 1GiB\n",
       "line 2: unknown field 'retention_max_byte' (did you mean 'retention_max_bytes'?)"},
      {{"--name", "a", "--cluster", c}, "window_chunks: [\n", "daemon.yaml"},
  };
  for (const Case& test : cases) {
    std::vector<std::string> args = test.args;
    if (!test.config.empty()) {
      args.push_back("--config");
      args.push_back(WriteConfig(test.config));
    }
    DaemonOptions options;
    Status status = Load(args, &options);
    EXPECT_FALSE(status.ok()) << test.expected;
    EXPECT_NE(status.message().find(test.expected), std::string::npos)
        << "expected '" << test.expected << "' in: " << status.message();
  }
}

}  // namespace
}  // namespace gridcast
