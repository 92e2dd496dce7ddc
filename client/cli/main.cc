// gridcast: the command-line client.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string_view>

#include "client/cli/bench_command.h"
#include "client/cli/cli_util.h"
#include "client/cli/cluster_command.h"
#include "client/cli/cluster_setup_command.h"
#include "client/cli/collectives_command.h"
#include "client/cli/netgrid_command.h"
#include "client/cli/slurm_command.h"
#include "client/cli/torrent_command.h"
#include "client/cli/tomography_command.h"
#include "common/build_info.h"

int main(int argc, char** argv) {
  CLI::App app("gridcast: move one large payload from one node to many, as fast as the network allows", "gridcast");
  app.require_subcommand(1);
  app.set_version_flag("--version", "gridcast " + std::string(gridcast::BuildVersion()));
  int exit_code = gridcast::cli::kExitOk;
  gridcast::cli::AddNetgridCommand(app, &exit_code);
  gridcast::cli::AddClusterCommands(app, &exit_code);
  gridcast::cli::AddClusterSetupCommands(app, &exit_code);
  gridcast::cli::AddCollectivesCommands(app, &exit_code);
  gridcast::cli::AddBenchCommand(app, &exit_code);
  gridcast::cli::AddTorrentCommands(app, &exit_code);
  gridcast::cli::AddTomographyCommand(app, &exit_code);
  gridcast::cli::AddSlurmCommands(app, &exit_code);
  if (argc == 2 && std::string_view(argv[1]) == "--cli-reference") {  // how docs/cli-reference.md is made
    std::cout << gridcast::cli::CliReference(app);
    return gridcast::cli::kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string unknown = gridcast::cli::UnknownCommand(app, argc, argv);
    if (unknown.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      unknown = gridcast::cli::UnknownOptionOf(app, argc, argv);
    }
    std::cerr << "gridcast: " << (unknown.empty() ? e.what() : unknown) << " (see --help)\n";
    return gridcast::cli::kExitBadInput;
  }
  return exit_code;
}
