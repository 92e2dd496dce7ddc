// What the two programs' parsers know, for the "did you mean" of a refused command line
// (common/spelling.h's UnknownOption).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace gridcast {

// Every long option `command` takes, as typed: "--name".
inline std::vector<std::string> LongOptionNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

}  // namespace gridcast
