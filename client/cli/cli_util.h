// Helpers shared by the gridcast subcommands: file reading at the edge, exit codes.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "client/plan_documents.h"  // LoadTopology
#include "cluster/cluster_file.h"
#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "common/file_io.h"
#include "include/gridcast/result.h"

namespace gridcast::cli {

// Exit codes of the gridcast command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the operation failed
inline constexpr int kExitBadInput = 2;   // bad arguments or bad input files

// --digest on send, allgather, bench and slurm stage.
inline constexpr const char* kDigestHelp =
    "Chunk digest: sha256 (default; proves every chunk is the source's even against a member that lies) or "
    "xxh3 (XXH3-128: catches corruption on wires and disks at a fraction of the CPU, for a cluster's own "
    "authenticated network); default: the cluster file's digest:, else sha256";

// A payload at an HTTP(S) origin (send URL, slurm stage URL; docs/origin.md): the flags that
// go with it.
struct OriginArgs {
  std::vector<std::string> headers;  // "Name: value", to the origin only
  std::string ca;                    // PEM file HTTPS is verified against
  std::string sha256;                // the whole payload's SHA-256 (hex), when known
  std::string size_limit;            // the most bytes from an origin without a length
  bool empty() const { return headers.empty() && ca.empty() && sha256.empty() && size_limit.empty(); }
};
// --header, --ca, --sha256 and --size-limit on `command`.
void AddOriginOptions(CLI::App* command, OriginArgs* args);
// Headers may also come in the environment, GRIDCAST_ORIGIN_HEADERS, one a line: unlike a
// command line, a process's environment is readable only by its user. The flags' headers,
// then the environment's.
inline constexpr const char* kOriginHeadersVariable = "GRIDCAST_ORIGIN_HEADERS";
std::vector<std::string> OriginHeaders(const OriginArgs& args);
// For a command run on (the `gridcast send` a stage starts): the flags again as given, but
// the headers in this process's environment, which the command inherits.
void PassOriginArgs(const OriginArgs& args, std::vector<std::string>* argv);

// --cluster FILE on `command`, required unless the environment's GRIDCAST_CLUSTER names the
// file (as it does for the MPI shim); the flag wins over the variable.
CLI::Option* AddClusterFileOption(CLI::App* command, std::string* cluster, const std::string& description);

// --mode push|pull|hybrid on `command`, into `mode` (left unset when the flag is not given).
CLI::Option* AddPlanModeOption(CLI::App* command, std::optional<PlanMode>* mode, const std::string& description);

// LoadClusterFile, and a warning on stderr when every user of this host can read the secret.
Result<ClusterConfig> LoadCluster(const std::string& path);

// The path of a program built next to this gridcast binary (build/bin, or the install
// directory), else `name` alone so that PATH finds it.
std::string ProgramBesideSelf(const std::string& name);
// The path of shared library `name` in ../lib beside this program (the build's layout); empty
// when it is not there.
std::string LibraryBesideSelf(const std::string& name);

// Prints "gridcast: <message>" to stderr and returns the exit code for the status
// (kExitBadInput for InvalidArgument/NotFound, kExitFailure otherwise).
int ReportError(const Status& status);

// When argv names a command `app` does not have where one is expected ("gridcast sned ...",
// "gridcast netgrid upp"): "'sned' is not a gridcast command (did you mean 'send'?)". Else
// empty.
std::string UnknownCommand(CLI::App& app, int argc, const char* const* argv);
// When argv gives the command it names an option it does not take ("gridcast send f
// --sourse m1"): "unknown option '--sourse' (did you mean '--source'?)". Else empty.
std::string UnknownOptionOf(CLI::App& app, int argc, const char* const* argv);

// docs/cli-reference.md: every command's --help, in Markdown, one section per command and
// subcommand (`gridcast --cli-reference`; a test compares each section with the command's own
// --help, so the two cannot drift).
std::string CliReference(CLI::App& app);

}  // namespace gridcast::cli
