// gridcastd: the per-node daemon. Configuration from a YAML file and flags (flags win), the
// cluster file gives the members, the secret and this member's default addresses.
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/units.h"
#include "daemon/daemon.h"
#include "daemon/transport/socket_io.h"

namespace {

using gridcast::Status;

struct Flags {
  std::string config;
  std::string name;
  std::string cluster;
  std::string data_dir;
  std::string memory_dir;
  std::string control;
  std::string data;
  std::string bt;
  bool bt_defaults = false;
  double swarm_stall_s = 0;
  std::vector<std::string> send_roots;
  uint32_t window_chunks = 0;
  size_t cache_chunks = 0;
  unsigned workers = 0;
  uint32_t control_fanout = 0;
  std::string page_cache_window;
  double io_timeout_s = 0;
  std::string tcp_congestion;
  bool fsync = false;
  std::string log_level;
  std::string tls_cert, tls_key, tls_ca;
};

// Fills every flag the command line left empty from the YAML config file.
Status ApplyConfigFile(Flags& f) {
  if (f.config.empty()) return Status::Ok();
  try {
    YAML::Node y = YAML::LoadFile(f.config);
    for (const auto& entry : y) {
      const std::string key = entry.first.Scalar();
      static const std::set<std::string> kKnown = {
          "name", "cluster", "data_dir", "memory_dir", "control", "data", "send_roots", "window_chunks",
          "cache_chunks", "workers", "control_fanout", "page_cache_window", "io_timeout_s", "tcp_congestion", "fsync", "log_level", "tls_cert", "tls_key", "tls_ca",
          "bt", "bt_defaults", "swarm_stall_s"};
      if (!kKnown.count(key)) {
        return Status::InvalidArgument(f.config + ": line " + std::to_string(entry.first.Mark().line + 1) +
                                       ": unknown field '" + key + "'");
      }
    }
    auto str = [&y](const char* key, std::string& out) {
      if (out.empty() && y[key]) out = y[key].as<std::string>();
    };
    str("name", f.name);
    str("cluster", f.cluster);
    str("data_dir", f.data_dir);
    str("memory_dir", f.memory_dir);
    str("control", f.control);
    str("data", f.data);
    str("bt", f.bt);
    str("log_level", f.log_level);
    str("page_cache_window", f.page_cache_window);
    str("tcp_congestion", f.tcp_congestion);
    str("tls_cert", f.tls_cert);
    str("tls_key", f.tls_key);
    str("tls_ca", f.tls_ca);
    if (f.send_roots.empty() && y["send_roots"]) f.send_roots = y["send_roots"].as<std::vector<std::string>>();
    if (f.window_chunks == 0 && y["window_chunks"]) f.window_chunks = y["window_chunks"].as<uint32_t>();
    if (f.cache_chunks == 0 && y["cache_chunks"]) f.cache_chunks = y["cache_chunks"].as<size_t>();
    if (f.workers == 0 && y["workers"]) f.workers = y["workers"].as<unsigned>();
    if (f.control_fanout == 0 && y["control_fanout"]) f.control_fanout = y["control_fanout"].as<uint32_t>();
    if (f.io_timeout_s == 0 && y["io_timeout_s"]) f.io_timeout_s = y["io_timeout_s"].as<double>();
    if (!f.fsync && y["fsync"]) f.fsync = y["fsync"].as<bool>();
    if (!f.bt_defaults && y["bt_defaults"]) f.bt_defaults = y["bt_defaults"].as<bool>();
    if (f.swarm_stall_s == 0 && y["swarm_stall_s"]) f.swarm_stall_s = y["swarm_stall_s"].as<double>();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(f.config + ": " + e.what());
  }
  return Status::Ok();
}

Status BuildOptions(const Flags& f, gridcast::DaemonOptions* options) {
  if (f.name.empty()) return Status::InvalidArgument("--name is required");
  if (f.cluster.empty()) return Status::InvalidArgument("--cluster is required");
  std::ifstream in(f.cluster);
  if (!in) return Status::InvalidArgument("cannot read cluster file " + f.cluster);
  std::stringstream text;
  text << in.rdbuf();
  const std::string base = std::filesystem::absolute(f.cluster).parent_path().string();
  gridcast::Result<gridcast::ClusterConfig> cluster = gridcast::ParseClusterFile(text.str(), base);
  if (!cluster.ok()) return cluster.status().WithContext(f.cluster);
  const gridcast::ClusterMember* self = cluster->Find(f.name);
  if (self == nullptr) return Status::InvalidArgument("'" + f.name + "' is not a member of " + f.cluster);
  options->name = f.name;
  options->cluster = *cluster;
  options->data_dir = f.data_dir.empty() ? "/var/lib/gridcast/" + f.name : f.data_dir;
  options->memory_dir = f.memory_dir;
  options->control_address = f.control.empty() ? self->control_address : f.control;
  options->data_address = f.data.empty() ? self->data_address : f.data;
  options->torrents.member_name = f.name;
  options->torrents.listen_address = f.bt.empty() ? self->bt_address : f.bt;
  options->torrents.libtorrent_defaults = f.bt_defaults;
  if (f.swarm_stall_s > 0) {
    options->torrents.stall_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.swarm_stall_s * 1000));
    options->execution.repair_stall = options->torrents.stall_timeout;
  }
  options->send_roots = f.send_roots;
  if (f.window_chunks > 0) options->execution.window_chunks = f.window_chunks;
  if (f.cache_chunks > 0) options->execution.cache_chunks = f.cache_chunks;
  if (f.workers > 0) options->workers = f.workers;
  if (f.control_fanout > 1024) return Status::InvalidArgument("--control-fanout: at most 1024");
  options->control_fanout = f.control_fanout;
  if (!f.page_cache_window.empty()) {
    gridcast::Result<uint64_t> window = gridcast::ParseSizeBytes(f.page_cache_window);
    if (!window.ok()) return window.status().WithContext("--page-cache-window");
    options->execution.page_cache_window_bytes = *window;
  }
  if (f.io_timeout_s > 0) {
    options->execution.io_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.io_timeout_s * 1000));
  }
  if (f.tcp_congestion == "system") {
    options->execution.tcp_congestion.clear();
  } else if (!f.tcp_congestion.empty()) {
    if (!gridcast::IsCongestionControlName(f.tcp_congestion)) {
      return Status::InvalidArgument("--tcp-congestion: '" + f.tcp_congestion +
                                     "' is not an algorithm name (letters, digits, '_' or '-', at most 15)");
    }
    options->execution.tcp_congestion = f.tcp_congestion;
  }
  options->execution.secret = cluster->secret;
  options->execution.sync_on_finish = f.fsync;
  options->tls_cert = f.tls_cert;
  options->tls_key = f.tls_key;
  options->tls_ca = f.tls_ca;
  if (options->tls_cert.empty() != options->tls_key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gridcastd: the gridcast daemon");
  Flags f;
  app.add_option("--config", f.config, "YAML file with any of the options below (flags win)");
  app.add_option("--name", f.name, "This member's name in the cluster file");
  app.add_option("--cluster", f.cluster, "Cluster file (members, secret, topology)");
  app.add_option("--data-dir", f.data_dir, "Payload directory (default /var/lib/gridcast/NAME)");
  app.add_option("--memory-dir", f.memory_dir,
                 "In-memory payloads, on a tmpfs; emptied at start and stop (default /dev/shm/gridcast-<digest of "
                 "the data dir>)");
  app.add_option("--control", f.control, "Control listen address: unix:/path or host:port");
  app.add_option("--data", f.data, "Data listen address ip:port");
  app.add_option("--send-root", f.send_roots, "Directory a broadcast may read payloads from");
  app.add_option("--window", f.window_chunks, "Unacknowledged chunks per connection (default 8)");
  app.add_option("--cache-chunks", f.cache_chunks, "Idle chunk buffers kept for reuse (default 32)");
  app.add_option("--workers", f.workers, "Threads that hash and write chunks (default: one per core)");
  app.add_option("--control-fanout", f.control_fanout,
                 "Children per member in the control tree of broadcasts this daemon sends (default 8)");
  app.add_option("--page-cache-window", f.page_cache_window,
                 "Forwarded chunks kept in the page cache before they are written back and dropped "
                 "(default 64MiB; 0 leaves the page cache to the kernel)");
  app.add_option("--io-timeout", f.io_timeout_s, "Seconds without progress before a connection is dropped (default 120)");
  app.add_option("--tcp-congestion", f.tcp_congestion,
                 "TCP congestion control of the payload's connections to children, e.g. cubic, bbr, reno; "
                 "'system' keeps the host's default (default cubic)");
  app.add_option("--bt", f.bt, "BitTorrent listen address ip:port (default: the cluster file's)");
  app.add_flag("--bt-defaults", f.bt_defaults,
               "libtorrent's default settings instead of gridcast's tuning (a benchmark baseline)");
  app.add_option("--swarm-stall", f.swarm_stall_s,
                 "Seconds without a new chunk before a pull member fetches from anyone, or a hybrid member "
                 "pulls a stalled tree's chunks (default 3 and 2)");
  app.add_flag("--fsync", f.fsync, "fdatasync every finished payload before reporting it done");
  app.add_option("--log-level", f.log_level, "trace, debug, info, warn, error (default info)");
  app.add_option("--tls-cert", f.tls_cert, "PEM certificate: serve control calls over TLS");
  app.add_option("--tls-key", f.tls_key, "PEM private key for --tls-cert");
  app.add_option("--tls-ca", f.tls_ca, "PEM CA for TLS calls to other daemons");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  Status status = ApplyConfigFile(f);
  gridcast::DaemonOptions options;
  if (status.ok()) status = BuildOptions(f, &options);
  if (!status.ok()) {
    std::cerr << "gridcastd: " << status.message() << "\n";
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(f.log_level.empty() ? "info" : f.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l [" + options.name + "] %v");
  status = gridcast::RunDaemon(options);
  if (!status.ok()) {
    spdlog::error("{}", status.message());
    return 1;
  }
  return 0;
}
