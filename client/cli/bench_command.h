// `gridcast bench`: one broadcast on a fresh netgrid (gridcast push, Open MPI MPI_Bcast, or
// iperf3 line rate), verified, timed against the physical bound, torn down.
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

void AddBenchCommand(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
