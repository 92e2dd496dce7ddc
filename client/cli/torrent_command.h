// `gridcast torrent export` and `gridcast serve-to`: standard BitTorrent clients fetch a
// payload the daemons hold (a .torrent and magnet link; the daemon dials a waiting client).
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

void AddTorrentCommands(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
