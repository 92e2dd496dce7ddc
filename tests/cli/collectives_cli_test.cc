// `gridcast plan` and `gridcast simulate` as a user runs them: bad input gets one line and exit
// code 2; --json has exactly the documented keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

const std::string kFlat16 = std::string(GRIDCAST_TOPOLOGIES) + "/flat16.yaml";

CommandOutput RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), GRIDCAST_CLI);
  Result<CommandOutput> out = RunCommand(args);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : CommandOutput{-1, ""};
}

// One line, "gridcast: ..." , and exit code 2.
void ExpectOneLineError(const CommandOutput& out, const std::string& mentions) {
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_EQ(out.output.rfind("gridcast: ", 0), 0u) << out.output;
  EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
  EXPECT_NE(out.output.find(mentions), std::string::npos) << out.output;
}

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

TEST(CollectivesCli, BadTopologyIsOneLineAndExitTwo) {
  const fs::path bad =
      fs::temp_directory_path() / ("gridcast-cli-bad-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(bad) << "switches:\n  - name: core\nnodes:\n  - switch: nowhere\n    count: 2\n";
  ExpectOneLineError(RunCli({"simulate", "--topology", bad.string(), "--size", "1GiB"}),
                     bad.string());
  ExpectOneLineError(
      RunCli({"plan", "--topology", bad.string(), "--size", "1GiB", "--algo", "chain"}),
      bad.string());
  fs::remove(bad);
  ExpectOneLineError(RunCli({"simulate", "--topology", "/nonexistent.yaml", "--size", "1GiB"}),
                     "/nonexistent.yaml");
}

TEST(CollectivesCli, AMistypedCommandNamesTheNearestOne) {
  ExpectOneLineError(RunCli({"sned", "payload.bin"}), "'sned' is not a gridcast command (did you mean 'send'?)");
  ExpectOneLineError(RunCli({"netgrid", "upp"}), "'upp' is not a gridcast netgrid command (did you mean 'up'?)");
  ExpectOneLineError(RunCli({"frobnicate"}), "'frobnicate' is not a gridcast command; it has netgrid, send,");
}

TEST(CollectivesCli, AMistypedOptionNamesTheNearestOneOfItsCommand) {
  ExpectOneLineError(RunCli({"plan", "--topology", kFlat16, "--size", "1GiB", "--algo", "chain", "--chunck", "1MiB"}),
                     "unknown option '--chunck' (did you mean '--chunk'?)");
  ExpectOneLineError(RunCli({"netgrid", "up", kFlat16, "--stat", "/tmp/x"}),
                     "unknown option '--stat' (did you mean '--state'?)");
  ExpectOneLineError(RunCli({"plan", "--topology", kFlat16, "--size", "1GiB", "--algo", "chain", "--zebra"}),
                     "unknown option '--zebra'");
}

TEST(CollectivesCli, BadArgumentsAreOneLineAndExitTwo) {
  ExpectOneLineError(
      RunCli({"simulate", "--topology", kFlat16, "--size", "1GiB", "--algo", "nope"}),
      "unknown algorithm 'nope'");
  ExpectOneLineError(RunCli({"plan", "--topology", kFlat16, "--size", "1GiB", "--algo", "nope"}),
                     "unknown algorithm 'nope'");
  ExpectOneLineError(RunCli({"plan", "--topology", kFlat16, "--size", "lots", "--algo", "chain"}),
                     "--size");
  ExpectOneLineError(
      RunCli({"plan", "--topology", kFlat16, "--size", "1GiB", "--algo", "chain", "--source", "x"}),
      "unknown node 'x'");
  EXPECT_EQ(RunCli({"plan", "--topology", kFlat16, "--size", "1GiB"}).exit_code, 2);  // no --algo
  for (const char* chunk : {"0", "128MiB", "1TiB"}) {
    ExpectOneLineError(RunCli({"plan", "--topology", kFlat16, "--size", "1GiB", "--algo", "chain", "--chunk", chunk}),
                       "--chunk: a chunk must be from 1 byte to 64 MiB");
  }
}

TEST(CollectivesCli, SimulateJsonHasExactlyTheDocumentedKeys) {
  const CommandOutput out =
      RunCli({"simulate", "--topology", kFlat16, "--size", "64MiB", "--algo", "chain", "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const nlohmann::json json = nlohmann::json::parse(out.output, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out.output;
  EXPECT_EQ(Keys(json), (std::set<std::string>{"bound_s", "results", "auto"}));
  EXPECT_TRUE(json["bound_s"].is_number_float());
  const std::set<std::string> row_keys = {"algo", "chunk_bytes", "time_s", "efficiency"};
  ASSERT_EQ(json["results"].size(), 1u);
  EXPECT_EQ(Keys(json["results"][0]), row_keys);
  EXPECT_EQ(json["results"][0]["algo"], "chain");
  // No --chunk: the planner's per-size default (about 2048 chunks, at least 64 KiB).
  EXPECT_EQ(json["results"][0]["chunk_bytes"], 64 << 10);
  EXPECT_EQ(Keys(json["auto"]), row_keys);
  EXPECT_NE(json["auto"]["algo"], "auto");
  EXPECT_GT(json["auto"]["efficiency"].get<double>(), 0.9);
  EXPECT_LE(json["auto"]["efficiency"].get<double>(), 1.0 + 1e-9);
}

// --fail: the patch the simulator predicts names each moved edge; on flat16's splitstream:2
// core-1 is the source's only child in lane 0, so both its children there move, to live
// members other than core-1.
TEST(CollectivesCli, SimulateFailNamesThePatchsMoves) {
  const CommandOutput out = RunCli({"simulate", "--topology", kFlat16, "--size", "64MiB", "--algo", "splitstream:2",
                                    "--fail", "core-1@0.3", "--detect", "1", "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const nlohmann::json json = nlohmann::json::parse(out.output, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out.output;
  ASSERT_EQ(json["moves"], json["patch"].size());
  ASSERT_EQ(json["patch"].size(), 2u) << out.output;
  std::set<std::string> moved;
  for (const auto& move : json["patch"]) {
    EXPECT_EQ(Keys(move), (std::set<std::string>{"lane", "child", "old_parent", "new_parent"}));
    EXPECT_EQ(move["lane"], 0);
    EXPECT_EQ(move["old_parent"], "core-1");
    EXPECT_NE(move["new_parent"], "core-1");
    moved.insert(move["child"].get<std::string>());
  }
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_GT(json["repaired_s"].get<double>(), json["healthy_s"].get<double>());
}

TEST(CollectivesCli, SimulateGoodputScalesTheTimesNotTheBound) {
  auto run = [](const char* goodput) {
    const CommandOutput out = RunCli({"simulate", "--topology", kFlat16, "--size", "64MiB", "--algo", "chain",
                                      "--chunk", "1MiB", "--goodput", goodput, "--json"});
    EXPECT_EQ(out.exit_code, 0) << out.output;
    return nlohmann::json::parse(out.output, nullptr, false);
  };
  const nlohmann::json full = run("1");
  const nlohmann::json tcp = run("0.955");
  ASSERT_FALSE(full.is_discarded() || tcp.is_discarded());
  EXPECT_DOUBLE_EQ(tcp["bound_s"].get<double>(), full["bound_s"].get<double>());
  const double full_s = full["results"][0]["time_s"].get<double>();
  const double tcp_s = tcp["results"][0]["time_s"].get<double>();
  // The per-chunk overhead does not scale with the rates; the transfer does.
  EXPECT_GT(tcp_s, full_s * 1.04);
  EXPECT_LT(tcp_s, full_s / 0.955 * 1.001);
  for (const char* bad : {"0", "1.5", "fast"}) {
    ExpectOneLineError(RunCli({"simulate", "--topology", kFlat16, "--size", "1GiB", "--goodput", bad}), "--goodput");
  }
}

TEST(CollectivesCli, PlanJsonAndDot) {
  const CommandOutput json_out = RunCli({"plan", "--topology", kFlat16, "--size", "8MiB", "--algo",
                                      "multilane", "--chunk", "1MiB", "--json"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.output;
  const nlohmann::json plan = nlohmann::json::parse(json_out.output, nullptr, false);
  ASSERT_FALSE(plan.is_discarded()) << json_out.output;
  EXPECT_EQ(plan["algorithm"], "multilane");
  EXPECT_EQ(plan["members"].size(), 16u);
  EXPECT_EQ(plan["lanes"].size(), 2u);
  const CommandOutput dot = RunCli({"plan", "--topology", kFlat16, "--size", "8MiB", "--algo",
                                 "chain", "--dot"});
  ASSERT_EQ(dot.exit_code, 0) << dot.output;
  EXPECT_EQ(dot.output.rfind("digraph", 0), 0u) << dot.output;
  EXPECT_NE(dot.output.find("subgraph \"cluster_core\""), std::string::npos) << dot.output;
  EXPECT_NE(dot.output.find("\"core-0\" -> \"core-1\""), std::string::npos) << dot.output;
}

}  // namespace
}  // namespace gridcast
