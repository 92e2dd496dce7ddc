#include "daemon/daemon_settings.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "cluster/cluster_file.h"
#include "cluster/local_member.h"
#include "common/spelling.h"
#include "common/units.h"
#include "daemon/participant/request_checks.h"
#include "daemon/transport/tcp/tcp_socket.h"

namespace gridcast {

namespace {

// A flag's key in the config file: the flag without its dashes, '-' written '_' (both read).
std::string KeyOf(const std::string& flag) {
  std::string key = flag.substr(flag.find_first_not_of('-'));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// What a value of type T is, said in errors and in the reference.
template <typename T>
std::string KindOf() {
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  if constexpr (std::is_same_v<T, std::string>) return "text";
  if constexpr (std::is_same_v<T, std::vector<std::string>>) return "a list of text, or one";
  if constexpr (std::is_floating_point_v<T>) return "a number";
  if constexpr (std::is_integral_v<T>) return "a whole number";
}

}  // namespace

template <typename T>
void SettingsTable::Declare(CLI::App& app, const std::string& flag, T& field, const std::string& help,
                            const std::string& old_key) {
  CLI::Option* option = app.add_option(flag, field, help);
  entries_.push_back({KeyOf(flag), old_key, flag, KindOf<T>(), help, option, [&field](const YAML::Node& node) {
                        if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                          if (node.IsScalar()) {
                            field = {node.as<std::string>()};
                            return;
                          }
                        }
                        field = node.as<T>();
                      }});
}

void SettingsTable::DeclareFlag(CLI::App& app, const std::string& flag, bool& field, const std::string& help) {
  CLI::Option* option = app.add_flag(flag, field, help);
  entries_.push_back({KeyOf(flag), "", flag, KindOf<bool>(), help, option,
                      [&field](const YAML::Node& node) { field = node.as<bool>(); }});
}

SettingsTable::SettingsTable(CLI::App& app, DaemonSettings& s) : settings_(s) {
  app.add_option("--config", s.config, "YAML file with any of the settings below (flags win)");
  Declare(app, "--name", s.name,
          "This member's name in the cluster file (default: the member with an address of this host, else the one "
          "its host name names)");
  Declare(app, "--cluster", s.cluster, "Cluster file (members, secret, topology)");
  Declare(app, "--data-dir", s.data_dir, "Payload directory (default /var/lib/gridcast/NAME)");
  Declare(app, "--memory-dir", s.memory_dir,
          "In-memory payloads, on a tmpfs; emptied at start and stop (default /dev/shm/gridcast-<digest of "
          "the data dir>)");
  Declare(app, "--control", s.control, "Control listen address: unix:/path or host:port");
  Declare(app, "--data", s.data, "Data listen address ip:port");
  Declare(app, "--send-root", s.send_roots, "Directory a broadcast may read payloads from (repeatable)", "send_roots");
  Declare(app, "--window", s.window_chunks, "Unacknowledged chunks per connection (default 8)", "window_chunks");
  Declare(app, "--cache-chunks", s.cache_chunks, "Idle chunk buffers kept for reuse (default 32)");
  Declare(app, "--workers", s.workers, "Threads that hash and write chunks (default: one per core)");
  Declare(app, "--control-fanout", s.control_fanout,
          "Children per member in the control tree of broadcasts this daemon sends (default 8)");
  Declare(app, "--page-cache-window", s.page_cache_window,
          "Forwarded chunks kept in the page cache before they are written back and dropped "
          "(default 64MiB; 0 leaves the page cache to the kernel)");
  Declare(app, "--io-timeout", s.io_timeout_s, "Seconds without progress before a connection is dropped (default 120)",
          "io_timeout_s");
  Declare(app, "--stall-timeout", s.stall_timeout_s,
          "Seconds without a new verified chunk at any member before a broadcast this daemon sends "
          "fails, naming the members not done (default 60; raise it when one chunk takes longer to cross the "
          "slowest link; a send's --stall-timeout overrides it)",
          "stall_timeout_s");
  Declare(app, "--member-lost-after", s.member_lost_after_s,
          "Seconds a member of a broadcast this daemon sends may not answer before the others go on without "
          "it (default 5; a member that comes back within it is prepared again and resumes)");
  Declare(app, "--tcp-congestion", s.tcp_congestion,
          "TCP congestion control of the payload's connections to children, e.g. cubic, bbr, reno; "
          "'system' keeps the host's default (default cubic)");
  Declare(app, "--bt", s.bt, "BitTorrent listen address ip:port (default: the cluster file's)");
  DeclareFlag(app, "--bt-defaults", s.bt_defaults,
              "libtorrent's default settings instead of gridcast's tuning (a benchmark baseline)");
  Declare(app, "--bt-upload-slots", s.bt_upload_slots,
          "Peers a pull member uploads to at once; -1 = as the plan says (fewer on slow uplinks, "
          "else every interested peer; default -1)");
  Declare(app, "--swarm-stall", s.swarm_stall_s,
          "Seconds without a new chunk before a pull member fetches from anyone, or a hybrid member "
          "pulls a stalled tree's chunks (default 3 and 2)",
          "swarm_stall_s");
  Declare(app, "--parent-silent", s.parent_silent_s,
          "Seconds a lane's parent may send no byte and no keepalive before the member below it reports the "
          "lane to the source, in push and hybrid; one with no connection open is reported after 0.6 s, or this "
          "if shorter (at least 0.2; default 1)");
  DeclareFlag(app, "--fsync", s.fsync, "fdatasync every finished payload before reporting it done");
  Declare(app, "--retention-max-age", s.retention_max_age,
          "Remove complete payloads this long after they arrived, e.g. 7d, 12h, 90min (default: kept; in the "
          "config file also retention: {max_age: ...})");
  Declare(app, "--retention-max-bytes", s.retention_max_bytes,
          "Remove the oldest complete payloads of the data directory while it holds more, e.g. 2TiB (default: "
          "no bound; retention: {max_bytes: ...})");
  Declare(app, "--retention-memory-max-bytes", s.retention_memory_max_bytes,
          "The same for the memory directory, e.g. 16GiB (default: no bound; retention: {memory_max_bytes: ...})");
  Declare(app, "--warm-memory", s.warm_memory,
          "The pages of removed in-memory payloads kept (up to this much) for the next ones, which "
          "then need no fresh memory, e.g. 4GiB; 0 keeps none (default 1GiB)");
  Declare(app, "--warm-memory-idle", s.warm_memory_idle,
          "How long kept pages may lie unused before they are freed, e.g. 10min, 1h (default 10min)");
  Declare(app, "--log-level", s.log_level, "trace, debug, info, warn, error (default info)");
  Declare(app, "--tls-cert", s.tls_cert, "PEM certificate: TLS on the control port and every data connection (default: NAME.pem beside the cluster's CA, when it is there)");
  Declare(app, "--tls-key", s.tls_key, "PEM private key for --tls-cert (default: NAME.key beside the CA)");
  Declare(app, "--metrics", s.metrics,
          "Serve Prometheus metrics at http://ADDR/metrics, ADDR = ip:port (default: none; no "
          "authentication, so bind it to a management address)");
  Declare(app, "--tls-ca", s.tls_ca, "PEM CA that other daemons' certificates chain to (default: the cluster file's tls_ca)");
}

Status SettingsTable::ApplyConfigFile() {
  const std::string& path = settings_.config;
  if (path.empty()) return Status::Ok();
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(path + ": " + e.what());
  }
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return Status::InvalidArgument(path + ": not a map of settings");
  // A map's keys join its own: `retention: {max_age: 7d}` is retention_max_age.
  struct Item {
    std::string written;  // as the file writes it
    YAML::Node value;
    int line;
  };
  std::vector<Item> items;
  for (const auto& item : root) {
    std::string key = item.first.Scalar();
    std::replace(key.begin(), key.end(), '-', '_');
    const bool known = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
    if (!item.second.IsMap() || known) {
      items.push_back({item.first.Scalar(), item.second, item.first.Mark().line + 1});
      continue;
    }
    for (const auto& inner : item.second) {
      items.push_back({item.first.Scalar() + "_" + inner.first.Scalar(), inner.second, inner.first.Mark().line + 1});
    }
  }
  std::set<const Entry*> given;
  for (const Item& item : items) {
    std::string key = item.written;
    std::replace(key.begin(), key.end(), '-', '_');
    const std::string where = path + ": line " + std::to_string(item.line);
    auto entry = std::find_if(entries_.begin(), entries_.end(),
                              [&](const Entry& e) { return e.key == key || e.old_key == key; });
    if (entry == entries_.end()) {
      std::vector<std::string> known;
      for (const Entry& e : entries_) known.push_back(e.key);
      return Status::InvalidArgument(where + ": unknown field '" + item.written + "'" +
                                     DidYouMean(key, known) + "; docs/daemon-settings.md lists them");
    }
    if (!given.insert(&*entry).second) {
      return Status::InvalidArgument(where + ": '" + entry->key + "' is given twice (once as '" + entry->old_key +
                                     "', its old name)");
    }
    if (key == entry->old_key) {
      notes_.push_back(where + ": '" + entry->old_key + "' is the old name of '" + entry->key +
                       "' (still read; the keys are the flags' names now)");
    }
    if (entry->option->count() > 0) continue;  // the command line gave it
    try {
      entry->read(item.value);
    } catch (const YAML::Exception&) {
      const std::string value = item.value.IsScalar() ? "'" + item.value.Scalar() + "'"
                                : item.value.IsSequence() ? "a list"
                                                          : "a map";
      return Status::InvalidArgument(where + ": '" + entry->key + "' takes " + entry->kind + ", not " + value);
    }
  }
  return Status::Ok();
}

std::string SettingsTable::Reference() const {
  std::string table = "| flag | config key | value | meaning |\n|---|---|---|---|\n";
  for (const Entry& e : entries_) {
    std::string help = e.help;
    std::replace(help.begin(), help.end(), '|', '/');
    table += "| `" + e.flag + "` | `" + e.key + "`" + (e.old_key.empty() ? "" : " (old: `" + e.old_key + "`)") +
             " | " + e.kind + " | " + help + " |\n";
  }
  return table;
}

// Stays whole: one check or assignment per setting, in the order the settings are declared.
Status BuildDaemonOptions(const DaemonSettings& s, DaemonOptions* options) {
  static const std::set<std::string> kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  if (kLogLevels.count(s.log_level) == 0) {
    return Status::InvalidArgument("--log-level: '" + s.log_level + "' is not one of trace, debug, info, warn, error, critical, off");
  }
  if (s.cluster.empty()) return Status::InvalidArgument("--cluster is required");
  GRIDCAST_ASSIGN_OR_RETURN(ClusterConfig cluster, LoadClusterFile(s.cluster));
  // Without --name: the member with an address (or the name) of this host.
  if (!s.name.empty() && cluster.Find(s.name) == nullptr) {
    return Status::InvalidArgument("'" + s.name + "' is not a member of " + s.cluster);
  }
  Result<std::string> name = LocalMember(cluster, s.name, CurrentHost(), "--name");
  if (!name.ok()) return name.status().WithContext(s.cluster);
  const ClusterMember* self = cluster.Find(*name);
  options->name = *name;
  options->cluster = cluster;
  options->cluster_path = s.cluster;
  options->data_dir = s.data_dir.empty() ? "/var/lib/gridcast/" + *name : s.data_dir;
  options->memory_dir = s.memory_dir;
  options->control_address = s.control.empty() ? self->control_address : s.control;
  options->data_address = s.data.empty() ? self->data_address : s.data;
  options->torrents.member_name = *name;
  options->torrents.listen_address = s.bt.empty() ? self->bt_address : s.bt;
  options->torrents.libtorrent_defaults = s.bt_defaults;
  if (s.bt_upload_slots < -1 || s.bt_upload_slots == 0) {
    return Status::InvalidArgument("--bt-upload-slots: -1 (every interested peer) or at least 1");
  }
  options->torrents.upload_slots = s.bt_upload_slots;
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("--swarm-stall", s.swarm_stall_s));
  if (s.swarm_stall_s > 0) {
    options->torrents.stall_timeout = std::chrono::milliseconds(static_cast<int64_t>(s.swarm_stall_s * 1000));
    options->execution.repair_stall = options->torrents.stall_timeout;
  }
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("--parent-silent", s.parent_silent_s, 3600));
  if (s.parent_silent_s > 0) {
    // Parents send keepalives a quarter of it apart, and not more often than every 50 ms.
    if (s.parent_silent_s < 0.2) return Status::InvalidArgument("--parent-silent: at least 0.2 seconds");
    options->execution.parent_silent = std::chrono::milliseconds(static_cast<int64_t>(s.parent_silent_s * 1000));
  }
  options->send_roots = s.send_roots;
  if (s.window_chunks == 0) return Status::InvalidArgument("--window: at least 1 chunk");
  options->execution.window_chunks = s.window_chunks;
  options->execution.cache_chunks = s.cache_chunks;
  options->workers = s.workers;
  if (s.control_fanout > 1024) return Status::InvalidArgument("--control-fanout: at most 1024");
  options->control_fanout = s.control_fanout;
  if (!s.page_cache_window.empty()) {
    Result<uint64_t> window = ParseSizeBytes(s.page_cache_window);
    if (!window.ok()) return window.status().WithContext("--page-cache-window");
    options->execution.page_cache_window_bytes = *window;
  }
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("--io-timeout", s.io_timeout_s));
  if (s.io_timeout_s > 0) {
    options->execution.io_timeout = std::chrono::milliseconds(static_cast<int64_t>(s.io_timeout_s * 1000));
  }
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("--stall-timeout", s.stall_timeout_s));
  if (s.stall_timeout_s > 0) {
    options->stall_timeout = std::chrono::milliseconds(static_cast<int64_t>(s.stall_timeout_s * 1000));
  }
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("--member-lost-after", s.member_lost_after_s));
  if (s.member_lost_after_s > 0) {
    options->member_lost_after = std::chrono::milliseconds(static_cast<int64_t>(s.member_lost_after_s * 1000));
  }
  if (s.tcp_congestion == "system") {
    options->tcp.congestion.clear();
  } else if (!s.tcp_congestion.empty()) {
    if (!IsCongestionControlName(s.tcp_congestion)) {
      return Status::InvalidArgument("--tcp-congestion: '" + s.tcp_congestion +
                                     "' is not an algorithm name (letters, digits, '_' or '-', at most 15)");
    }
    options->tcp.congestion = s.tcp_congestion;
  }
  options->execution.secret = cluster.secret;
  options->execution.sync_on_finish = s.fsync;
  if (!s.metrics.empty()) GRIDCAST_RETURN_IF_ERROR(SplitHostPort(s.metrics, /*any_port=*/true).status().WithContext("--metrics"));
  options->metrics_address = s.metrics;
  if (!s.retention_max_age.empty()) {
    Result<double> age = ParseAgeSeconds(s.retention_max_age);
    if (!age.ok() || *age < 1) {
      return Status::InvalidArgument("--retention-max-age: '" + s.retention_max_age +
                                     "' is not an age of a second or more (7d, 12h, 90min, 3600s)");
    }
    options->data_retention.max_age = options->memory_retention.max_age = std::chrono::seconds(static_cast<int64_t>(*age));
  }
  for (auto [flag, text, bound] : {std::tuple{"--retention-max-bytes", &s.retention_max_bytes, &options->data_retention.max_bytes},
                                   std::tuple{"--retention-memory-max-bytes", &s.retention_memory_max_bytes,
                                              &options->memory_retention.max_bytes}}) {
    if (text->empty()) continue;
    Result<uint64_t> bytes = ParseSizeBytes(*text);
    if (!bytes.ok() || *bytes == 0) {
      return Status::InvalidArgument(std::string(flag) + ": '" + *text + "' is not a size of a byte or more (2TiB, 500GiB)");
    }
    *bound = *bytes;
  }
  if (!s.warm_memory.empty()) {
    Result<uint64_t> bytes = ParseSizeBytes(s.warm_memory);
    if (!bytes.ok()) return bytes.status().WithContext("--warm-memory");
    options->warm_memory_bytes = *bytes;
  }
  if (!s.warm_memory_idle.empty()) {
    Result<double> idle = ParseAgeSeconds(s.warm_memory_idle);
    if (!idle.ok() || *idle < 1) {
      return Status::InvalidArgument("--warm-memory-idle: '" + s.warm_memory_idle +
                                     "' is not a time of a second or more (10min, 1h, 600s)");
    }
    options->warm_memory_idle = std::chrono::seconds(static_cast<int64_t>(*idle));
  }
  options->tls_cert = s.tls_cert;
  options->tls_key = s.tls_key;
  options->tls_ca = s.tls_ca.empty() ? cluster.tls_ca_path : s.tls_ca;
  // `gridcast cluster init --tls` puts each member's certificate beside the CA.
  const std::filesystem::path beside_ca = std::filesystem::path(options->tls_ca).parent_path();
  if (options->tls_cert.empty() && options->tls_key.empty() && !options->tls_ca.empty() &&
      std::filesystem::exists(beside_ca / (*name + ".pem")) && std::filesystem::exists(beside_ca / (*name + ".key"))) {
    options->tls_cert = (beside_ca / (*name + ".pem")).string();
    options->tls_key = (beside_ca / (*name + ".key")).string();
  }
  if (options->tls_cert.empty() != options->tls_key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (!options->tls_cert.empty() && options->tls_ca.empty()) {
    return Status::InvalidArgument("--tls-cert needs the cluster's CA to check other members' certificates "
                                   "(--tls-ca, or tls_ca in the cluster file)");
  }
  return Status::Ok();
}

}  // namespace gridcast
