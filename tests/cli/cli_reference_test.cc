// docs/cli-reference.md is what `gridcast --cli-reference` prints, and each of its sections is
// what that command's own --help prints: the reference cannot drift from the program.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

CommandOutput RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), GRIDCAST_CLI);
  Result<CommandOutput> out = RunCommand(args);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : CommandOutput{-1, ""};
}

TEST(CliReference, TheDocumentIsEveryCommandsOwnHelp) {
  std::ifstream in(std::string(GRIDCAST_DOCS_DIR) + "/cli-reference.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const CommandOutput reference = RunCli({"--cli-reference"});
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_TRUE(doc.str() == reference.output)
      << "docs/cli-reference.md is out of date: gridcast --cli-reference > docs/cli-reference.md";

  int sections = 0;
  std::istringstream lines(doc.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("## gridcast", 0) != 0) continue;
    std::vector<std::string> args;
    std::istringstream words(line.substr(std::string("## gridcast").size()));
    for (std::string word; words >> word;) args.push_back(word);
    args.push_back("--help");
    std::string fence, block;
    std::getline(lines, fence);  // the blank line
    std::getline(lines, fence);
    ASSERT_EQ(fence, "```text") << line;
    for (std::string text; std::getline(lines, text) && text != "```";) block += text + "\n";
    const CommandOutput help = RunCli(args);
    EXPECT_EQ(help.exit_code, 0) << line;
    EXPECT_TRUE(help.output == block) << line << " differs from its --help:\n" << help.output;
    ++sections;
  }
  EXPECT_GE(sections, 20);  // every command and subcommand
}

}  // namespace
}  // namespace gridcast
