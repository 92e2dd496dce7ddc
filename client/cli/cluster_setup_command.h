// `gridcast cluster init|add-host`: a cluster's files made from a host list, for real machines
// (docs/real-cluster.md): the cluster file with a fresh secret, a topology skeleton, and with
// --tls a CA and a certificate per member.
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

// Adds the `cluster` subcommand tree to app; the chosen command stores its exit code in
// *exit_code when it runs.
void AddClusterSetupCommands(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
