// `gridcast send`, `status`, `cancel`, `list`: talk to the daemons of a cluster file.
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

void AddClusterCommands(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
