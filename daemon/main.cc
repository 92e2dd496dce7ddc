// gridcastd: the per-node daemon. Its settings (daemon/daemon_settings.h) come from flags, a
// YAML config file and the cluster file, which gives the members, the secret and this
// member's default addresses.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "daemon/daemon.h"
#include "daemon/daemon_settings.h"

int main(int argc, char** argv) {
  CLI::App app("gridcastd: the gridcast daemon");
  gridcast::DaemonSettings settings;
  gridcast::SettingsTable table(app, settings);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  gridcast::Status status = table.ApplyConfigFile();
  gridcast::DaemonOptions options;
  if (status.ok()) status = gridcast::BuildDaemonOptions(settings, &options);
  if (!status.ok()) {
    std::cerr << "gridcastd: " << status.message() << "\n";
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
