// gridcast tomography: measurement broadcasts (BitTorrent, pieces chosen freely, fresh probe
// payloads, sources rotating over the members) whose per-pair observations the tomography
// library turns into bandwidth clusters, bottleneck estimates and an inferred topology. The
// inferred topology is cached next to the cluster file for `gridcast send --algo auto`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "include/gridcast/result.h"

namespace gridcast::cli {

void AddTomographyCommand(CLI::App& app, int* exit_code);

// The defaults of `gridcast tomography` on the cluster file (runs auto, rotating sources),
// for `gridcast send --retomograph`: progress lines go to stderr. Updates the cache and
// returns the inferred topology's text.
Result<std::string> RetomographCluster(const std::string& cluster_file, const std::string& tls_ca);

}  // namespace gridcast::cli
