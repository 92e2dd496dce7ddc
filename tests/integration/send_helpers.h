// Shared by the integration tests: run `gridcast send` against a LocalCluster and check copies.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/local_cluster.h"

namespace gridcast {

inline std::string FileSha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  Sha256Stream sha;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    sha.Update({reinterpret_cast<const uint8_t*>(buffer.data()), static_cast<size_t>(in.gcount())});
  }
  return ToHex(sha.Finish());
}

struct SendResult {
  int exit_code = -1;
  std::string output;
  nlohmann::json json;
};

inline SendResult Send(const LocalCluster& cluster, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {GRIDCAST_CLI, "send"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--cluster", cluster.cluster_file(), "--json"});
  Result<CommandOutput> out = RunCommand(argv);
  SendResult result;
  if (!out.ok()) return result;
  result.exit_code = out->exit_code;
  result.output = out->output;
  result.json = nlohmann::json::parse(out->output, nullptr, false);
  return result;
}

// Every member's copy of `name` has the source file's digest.
inline void ExpectEverywhere(const LocalCluster& cluster, const std::string& source_path, const std::string& name) {
  const std::string expected = FileSha256(source_path);
  for (int i = 1; i < cluster.size(); ++i) {
    const fs::path copy = cluster.data_dir(i) / name;
    ASSERT_TRUE(fs::exists(copy)) << copy;
    EXPECT_EQ(fs::file_size(copy), fs::file_size(source_path)) << copy;
    EXPECT_EQ(FileSha256(copy), expected) << copy;
    EXPECT_FALSE(fs::exists(copy.string() + ".part")) << copy;
  }
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gridcast
