#include "client/cli/cli_util.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "collectives/topology.h"
#include "common/cli_options.h"
#include "common/spelling.h"

namespace gridcast::cli {

CLI::Option* AddClusterFileOption(CLI::App* command, std::string* cluster, const std::string& description) {
  CLI::Option* option = command->add_option("--cluster", *cluster, description + " (default: $GRIDCAST_CLUSTER)");
  // Not CLI11's envname: every subcommand binds the same string, and an unused subcommand's
  // variable would overwrite the flag given to the one that runs.
  const char* from_environment = std::getenv("GRIDCAST_CLUSTER");
  if (from_environment == nullptr || *from_environment == '\0') return option->required();
  return option->default_val(std::string(from_environment));
}

void AddOriginOptions(CLI::App* command, OriginArgs* args) {
  command->add_option("--header", args->headers,
                      "URL: an HTTP header 'Name: value' for the origin (repeatable; a token: sent to the URL's own "
                      "host only, never printed or logged; also GRIDCAST_ORIGIN_HEADERS, one a line, which unlike "
                      "the command line only this user can read)");
  command->add_option("--ca", args->ca, "URL: PEM file of the CA(s) HTTPS is verified against (default: the system's)");
  command->add_option("--sha256", args->sha256,
                      "URL: the payload's SHA-256 (64 hex digits); a payload that differs fails every copy");
  command->add_option("--size-limit", args->size_limit,
                      "URL: the most bytes taken from an origin that sends no length (default 1TiB)");
}

std::vector<std::string> OriginHeaders(const OriginArgs& args) {
  std::vector<std::string> headers = args.headers;
  if (const char* inherited = std::getenv(kOriginHeadersVariable); inherited != nullptr) {
    std::istringstream lines(inherited);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) headers.push_back(line);
    }
  }
  return headers;
}

void PassOriginArgs(const OriginArgs& args, std::vector<std::string>* argv) {
  const std::vector<std::string> headers = OriginHeaders(args);
  if (!headers.empty()) {
    std::string joined;
    for (const std::string& header : headers) joined += header + "\n";
    setenv(kOriginHeadersVariable, joined.c_str(), 1);
  }
  if (!args.ca.empty()) argv->insert(argv->end(), {"--ca", std::filesystem::absolute(args.ca).string()});
  if (!args.sha256.empty()) argv->insert(argv->end(), {"--sha256", args.sha256});
  if (!args.size_limit.empty()) argv->insert(argv->end(), {"--size-limit", args.size_limit});
}

CLI::Option* AddPlanModeOption(CLI::App* command, std::optional<PlanMode>* mode, const std::string& description) {
  std::vector<std::string> names;
  for (const PlanModeRow& row : kPlanModeRows) names.emplace_back(row.name);
  return command
      ->add_option_function<std::string>(
          "--mode", [mode](const std::string& name) { *mode = PlanModeFromName(name); }, description)
      ->check(CLI::IsMember(names));
}

Result<ClusterConfig> LoadCluster(const std::string& path) {
  Result<ClusterConfig> cluster = LoadClusterFile(path);
  if (const std::string exposed = SecretExposure(path); cluster.ok() && !exposed.empty()) {
    std::fprintf(stderr, "gridcast: warning: %s\n", exposed.c_str());
  }
  return cluster;
}

std::string ProgramBesideSelf(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / name;
  return !ec && std::filesystem::exists(beside, ec) ? beside.string() : name;
}

std::string LibraryBesideSelf(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path library = self.parent_path().parent_path() / "lib" / name;
  return !ec && std::filesystem::exists(library, ec) ? library.string() : "";
}

int ReportError(const Status& status) {
  std::cerr << "gridcast: " << status.message() << "\n";
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

std::string UnknownCommand(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* at = &app;
  std::string path = "gridcast";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const std::vector<CLI::App*> commands = at->get_subcommands({});
    if (word.empty() || word[0] == '-' || commands.empty()) return "";
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* command : commands) {
      names.push_back(command->get_name());
      if (command->get_name() == word) next = command;
    }
    if (next == nullptr) {
      return "'" + word + "' is not a " + path + " command" + DidYouMean(word, names) + "; it has " +
             [&names] {
               std::string all;
               for (const std::string& name : names) all += (all.empty() ? "" : ", ") + name;
               return all;
             }();
    }
    at = next;
    path += " " + word;
  }
  return "";
}

std::string UnknownOptionOf(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* at = &app;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    CLI::App* next = nullptr;
    if (argv[i][0] != '-' && args.empty()) {
      for (CLI::App* command : at->get_subcommands({})) {
        if (command->get_name() == argv[i]) next = command;
      }
    }
    if (next != nullptr) {
      at = next;
    } else {
      args.emplace_back(argv[i]);
    }
  }
  return UnknownOption(args, LongOptionNames(*at));
}

namespace {

void AppendReference(CLI::App& command, const std::string& parent, std::string* out) {
  const std::string path = parent.empty() ? command.get_name() : parent + " " + command.get_name();
  *out += "\n## " + path + "\n\n```text\n" + command.help(parent) + "```\n";
  for (CLI::App* sub : command.get_subcommands({})) AppendReference(*sub, path, out);
}

}  // namespace

std::string CliReference(CLI::App& app) {
  std::string out =
      "# The gridcast command line\n\n"
      "Every command's `--help`, as `gridcast --cli-reference` prints it (generated: a test compares each\n"
      "section with the command's own `--help`). gridcastd's settings: docs/daemon-settings.md.\n";
  AppendReference(app, "", &out);
  return out;
}

}  // namespace gridcast::cli
