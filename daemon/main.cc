// gridcastd: the per-node daemon. Its settings (daemon/daemon_settings.h) come from flags, a
// YAML config file and the cluster file, which gives the members, the secret and this
// member's default addresses.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "cluster/cluster_file.h"
#include "common/build_info.h"
#include "common/cli_options.h"
#include "common/spelling.h"
#include "daemon/daemon.h"
#include "daemon/daemon_settings.h"

int main(int argc, char** argv) {
  CLI::App app("gridcastd: the gridcast daemon");
  app.set_version_flag("--version", "gridcastd " + std::string(gridcast::BuildVersion()));
  gridcast::DaemonSettings settings;
  gridcast::SettingsTable table(app, settings);
  bool check_config = false;
  bool reference = false;
  app.add_flag("--settings-reference", reference, "Print every setting as a Markdown table and exit")
      ->group("");  // how docs/daemon-settings.md is made
  app.add_flag("--check-config", check_config,
               "Check the settings, the cluster file, the directories and the TLS files, say what would run, and "
               "exit: 0 when gridcastd could start, 2 with the problem when not (binds no port)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = gridcast::UnknownOption({argv + 1, argv + argc}, gridcast::LongOptionNames(app));
    if (unknown.empty() || dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return app.exit(e) == 0 ? 0 : 2;
    std::cerr << "gridcastd: " << unknown << " (see --help)\n";
    return 2;
  }
  if (reference) {
    std::cout << table.Reference();
    return 0;
  }
  gridcast::Status status = table.ApplyConfigFile();
  for (const std::string& note : table.notes()) std::cerr << "gridcastd: note: " << note << "\n";
  gridcast::DaemonOptions options;
  if (status.ok()) status = gridcast::BuildDaemonOptions(settings, &options);
  if (status.ok()) {
    if (const std::string exposed = gridcast::SecretExposure(options.cluster_path); !exposed.empty()) {
      std::cerr << "gridcastd: warning: " << exposed << "\n";
    }
  }
  if (status.ok() && check_config) {
    gridcast::Result<std::string> checked = gridcast::CheckDaemonOptions(options);
    if (checked.ok()) {
      std::cout << "gridcastd: configuration OK: " << *checked << "\n";
      return 0;
    }
    status = checked.status();
  }
  if (!status.ok()) {
    std::istringstream lines(status.message());  // --check-config says every problem, a line each
    for (std::string line; std::getline(lines, line);) std::cerr << "gridcastd: " << line << "\n";
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(settings.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l [" + options.name + "] %v");
  status = gridcast::RunDaemon(options);
  if (!status.ok()) {
    spdlog::error("{}", status.message());
    return 1;
  }
  return 0;
}
