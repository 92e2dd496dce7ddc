// What members hold, and letting it go: `gridcast remove` (a file, a directory payload, one
// member, twice), a daemon's retention removing a payload past its age by itself, a removed
// in-memory payload's pages taken by the next one, and the
// warning every command gives for a cluster file every user can read.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

CommandOutput Gridcast(const LocalCluster& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), GRIDCAST_CLI);
  args.insert(args.end(), {"--cluster", cluster.cluster_file()});
  Result<CommandOutput> out = RunCommand(args);
  return out.ok() ? *out : CommandOutput{-1, out.status().ToString()};
}

TEST(Remove, AFileADirectoryAndOneMemberAndAgain) {
  LocalCluster cluster(GRIDCASTD, "remove", 3);
  const std::string file = cluster.MakePayload("kept.bin", 300'000);
  ASSERT_EQ(Send(cluster, {file, "--algo", "chain"}).exit_code, 0);
  const fs::path tree = cluster.dir() / "payloads" / "tree";
  fs::create_directories(tree / "inner");
  std::ofstream(tree / "a.txt") << "a";
  std::ofstream(tree / "inner" / "b.txt") << "b";
  ASSERT_EQ(Send(cluster, {tree.string(), "--algo", "chain"}).exit_code, 0);
  ASSERT_TRUE(fs::exists(cluster.data_dir(2) / "tree" / "inner" / "b.txt"));

  CommandOutput out = Gridcast(cluster, {"remove", "kept.bin", "--member", "m1"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_FALSE(fs::exists(cluster.data_dir(1) / "kept.bin"));
  EXPECT_TRUE(fs::exists(cluster.data_dir(2) / "kept.bin"));

  out = Gridcast(cluster, {"remove", "kept.bin"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("m1: not held"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("m2: removed"), std::string::npos) << out.output;
  EXPECT_FALSE(fs::exists(cluster.data_dir(2) / "kept.bin"));

  out = Gridcast(cluster, {"remove", "tree"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  for (int m = 1; m < 3; ++m) EXPECT_FALSE(fs::exists(cluster.data_dir(m) / "tree")) << m;
  EXPECT_TRUE(fs::exists(tree / "inner" / "b.txt")) << "the source's own directory is not a held payload";

  out = Gridcast(cluster, {"remove", "../escape"});
  EXPECT_NE(out.exit_code, 0) << out.output;
  out = Gridcast(cluster, {"remove", "x", "--member", "m9"});
  EXPECT_EQ(out.exit_code, 2) << out.output;
}

TEST(Retention, APayloadPastItsAgeGoesByItself) {
  LocalCluster cluster(GRIDCASTD, "retention", 2, {"--retention-max-age", "1s"});
  const std::string file = cluster.MakePayload("old.bin", 200'000);
  ASSERT_EQ(Send(cluster, {file, "--algo", "chain"}).exit_code, 0);
  const fs::path copy = cluster.data_dir(1) / "old.bin";
  // Swept every 10 s (a tenth of the age, at least 10 s).
  for (int waited = 0; fs::exists(copy) && waited < 300; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(fs::exists(copy));
  EXPECT_NE(ReadFile(cluster.log(1)).find("retention: removed old.bin"), std::string::npos);
}

// A removed in-memory payload's pages are kept (store/warm_memory.h) and the next in-memory
// payload is received into them, verified like any other.
TEST(WarmMemory, TheNextInMemoryPayloadTakesARemovedOnesPages) {
  LocalCluster cluster(GRIDCASTD, "warm-memory", 3);
  const std::string first = cluster.MakePayload("first.bin", 3'000'000);
  ASSERT_EQ(Send(cluster, {first, "--algo", "chain", "--in-memory"}).exit_code, 0);
  CommandOutput out = Gridcast(cluster, {"remove", "first.bin", "--in-memory"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto spares = [&](int member) {
    const fs::path warm = cluster.memory_dir(member) / ".gridcast" / "warm";
    return fs::exists(warm) ? std::distance(fs::directory_iterator(warm), fs::directory_iterator()) : 0;
  };
  for (int m = 1; m < 3; ++m) {
    EXPECT_FALSE(fs::exists(cluster.memory_dir(m) / "first.bin")) << m;
    EXPECT_EQ(spares(m), 1) << m;
    EXPECT_NE(ReadFile(cluster.log(m)).find("removed first.bin (in memory), its pages kept for the next payload"),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(Gridcast(cluster, {"list"}).output.find("first.bin"), std::string::npos);

  const std::string second = cluster.MakePayload("second.bin", 2'500'000);
  const SendResult sent = Send(cluster, {second, "--algo", "chain", "--in-memory"});
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  for (int m = 1; m < 3; ++m) {
    EXPECT_EQ(spares(m), 0) << m;
    EXPECT_EQ(fs::file_size(cluster.memory_dir(m) / "second.bin"), 2'500'000u) << m;
    EXPECT_EQ(ReadFile(cluster.memory_dir(m) / "second.bin"), ReadFile(second)) << m;
  }
}

TEST(SecretWarning, EveryCommandSaysWhenAnyUserCanReadTheSecret) {
  LocalCluster cluster(GRIDCASTD, "secret-warning", 1);
  CommandOutput out = Gridcast(cluster, {"list"});
  EXPECT_EQ(out.output.find("warning"), std::string::npos) << out.output;
  chmod(cluster.cluster_file().c_str(), 0644);
  out = Gridcast(cluster, {"list"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("gridcast: warning: " + cluster.cluster_file() +
                            " holds the cluster's secret and every user of this host can read it"),
            std::string::npos)
      << out.output;
}

}  // namespace
}  // namespace gridcast
