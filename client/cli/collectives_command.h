// `gridcast plan` and `gridcast simulate`: the planners, the simulator and the physical bound
// (collectives/) on a topology file, without a cluster.
//
//   gridcast plan --topology T.yaml --algo NAME --size SIZE [--chunk SIZE] [--source NODE]
//                 [--json | --dot]
//   gridcast simulate --topology T.yaml --size SIZE [--algo NAME|all|auto] [--chunk SIZE] [--json]
//
// Without --chunk, `auto` chooses the chunk size (and stream count) itself and the other
// planners use 1 MiB. Bad arguments and bad topologies print one line and exit 2.
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

// Adds `plan` and `simulate` to app. The chosen command stores its exit code in *exit_code.
void AddCollectivesCommands(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
