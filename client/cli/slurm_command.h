// gridcast slurm: stage payloads on the nodes of a Slurm job (docs/slurm.md).
#pragma once

#include <CLI/CLI.hpp>

namespace gridcast::cli {

// stage (start a daemon per node with srun, broadcast, stop), stop (end what stage --keep left),
// daemon (one node's gridcastd, run by stage).
void AddSlurmCommands(CLI::App& app, int* exit_code);

}  // namespace gridcast::cli
