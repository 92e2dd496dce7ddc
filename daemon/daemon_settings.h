// Every gridcastd setting, declared once (DeclareSettings): its flag, its key in the YAML
// `--config` file, its help text and the field it fills. Flags win over the file, which wins
// over the cluster file's addresses for this member.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "include/gridcast/status.h"
#include "daemon/daemon.h"

namespace YAML {
class Node;
}

namespace gridcast {

// The settings as given, before they are checked and turned into DaemonOptions.
struct DaemonSettings {
  std::string config;
  std::string name;
  std::string cluster;
  std::string data_dir;
  std::string memory_dir;
  std::string control;
  std::string data;
  std::string bt;
  bool bt_defaults = false;
  int bt_upload_slots = TorrentSessionOptions{}.upload_slots;
  double swarm_stall_s = 0;  // 0 = the defaults (TorrentSessionOptions, ExecutionOptions)
  double parent_silent_s = 0;  // 0 = ExecutionOptions' default
  std::vector<std::string> send_roots;
  uint32_t window_chunks = ExecutionOptions{}.window_chunks;
  size_t cache_chunks = ExecutionOptions{}.cache_chunks;
  unsigned workers = 0;
  uint32_t control_fanout = 0;
  std::string page_cache_window;
  double io_timeout_s = 0;   // 0 = ExecutionOptions' default
  double stall_timeout_s = 0;  // 0 = CoordinatorOptions' default
  double member_lost_after_s = 0;  // 0 = CoordinatorOptions' default
  std::string tcp_congestion;
  bool fsync = false;
  std::string log_level = "info";
  std::string tls_cert, tls_key, tls_ca;
  std::string metrics;
  std::string retention_max_age;
  std::string retention_max_bytes;
  std::string retention_memory_max_bytes;
  std::string warm_memory;
  std::string warm_memory_idle;
};

class SettingsTable {
 public:
  // Declares every setting on `app`, bound to `settings` (which must outlive the table).
  SettingsTable(CLI::App& app, DaemonSettings& settings);

  // After app.parse(): fills every setting the command line did not give from the YAML file
  // named by --config (if any). Errors name the file, and the line of an unknown key or of a
  // value of the wrong type (saying what it takes); an unknown key names the nearest known one.
  // A key is a flag's name without its dashes ("window", "io_timeout"; '-' or '_'); the keys
  // of before that (window_chunks, io_timeout_s, ...) are still read, each with a note.
  Status ApplyConfigFile();
  // What ApplyConfigFile() has to say that is no error (old key names), one line each.
  const std::vector<std::string>& notes() const { return notes_; }
  // Every setting as a Markdown table (flag, key, value, meaning): docs/daemon-settings.md.
  std::string Reference() const;

 private:
  struct Entry {
    std::string key;       // in the config file: the flag without its dashes, '_' for '-'
    std::string old_key;   // its key before keys were the flags' names: still read, with a note
    std::string flag;
    std::string kind;      // what its value is ("a whole number", ...)
    std::string help;
    CLI::Option* option;   // on the command line
    std::function<void(const YAML::Node&)> read;
  };
  template <typename T>
  void Declare(CLI::App& app, const std::string& flag, T& field, const std::string& help,
               const std::string& old_key = "");
  void DeclareFlag(CLI::App& app, const std::string& flag, bool& field, const std::string& help);

  DaemonSettings& settings_;
  std::vector<Entry> entries_;
  std::vector<std::string> notes_;
};

// Checks the settings and reads the cluster file: the options RunDaemon takes.
Status BuildDaemonOptions(const DaemonSettings& settings, DaemonOptions* options);

}  // namespace gridcast
