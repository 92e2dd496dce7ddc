// `gridcast netgrid up|down|list|exec`: the emulated network (deploy/netgrid.h) from the shell.
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

// Adds the netgrid subcommand tree to app. The chosen command stores its exit code in
// *exit_code when it runs.
void AddNetgridCommand(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
