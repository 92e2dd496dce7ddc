// The chunk digest chosen per broadcast (--digest sha256|xxh3, the cluster file's digest:),
// with real daemons on loopback: each digest through push, hybrid's push lanes, directories,
// allgather and `list --verify`; the summary names it; a name no digest has is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

class DigestTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { cluster_ = new LocalCluster(GRIDCASTD, "digest", 4); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  // A name unique to this digest.
  static std::string Named(const std::string& base) { return base + "-" + GetParam(); }
  static LocalCluster* cluster_;
};
LocalCluster* DigestTest::cluster_ = nullptr;

INSTANTIATE_TEST_SUITE_P(Digests, DigestTest, ::testing::Values("sha256", "xxh3"));

TEST_P(DigestTest, PushAndHybridNameTheDigestAndDeliverVerifiedCopies) {
  const std::string path = cluster_->MakePayload(Named("p") + ".bin", 9 * (64 << 10) + 123);
  for (const char* mode : {"push", "hybrid"}) {
    SCOPED_TRACE(mode);
    const std::string name = Named(std::string(mode)) + ".bin";
    SendResult r = Send(*cluster_, {path, "--mode", mode, "--algo", "multilane", "--chunk", "64KiB", "--digest",
                                    GetParam(), "--name", name});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_TRUE(r.json.is_object()) << r.output;
    EXPECT_EQ(r.json["digest"], GetParam());
    EXPECT_TRUE(r.json["verified"].get<bool>());
    ExpectEverywhere(*cluster_, path, name);
  }
}

TEST_P(DigestTest, DirectoriesArriveWhole) {
  const fs::path tree = cluster_->dir() / "payloads" / Named("tree");
  fs::create_directories(tree / "sub");
  std::ofstream(tree / "big.bin", std::ios::binary) << std::string(1'000'003, 'd');
  std::ofstream(tree / "sub" / "small.txt") << GetParam();
  SendResult r = Send(*cluster_, {tree.string(), "--digest", GetParam(), "--chunk", "64KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.json["digest"], GetParam());
  for (int i = 1; i < cluster_->size(); ++i) {
    EXPECT_EQ(FileSha256(cluster_->data_dir(i) / Named("tree") / "big.bin"), FileSha256(tree / "big.bin"));
    EXPECT_EQ(ReadFile(cluster_->data_dir(i) / Named("tree") / "sub" / "small.txt"), GetParam());
  }
}

TEST_P(DigestTest, AllgatherGathersEveryPart) {
  std::vector<std::string> argv = {GRIDCAST_CLI, "allgather", "--cluster", cluster_->cluster_file(), "--name",
                                   Named("gathered"), "--digest", GetParam(), "--chunk", "64KiB", "--json"};
  std::map<std::string, std::string> parts;
  for (int i = 0; i < cluster_->size(); ++i) {
    const std::string member = "m" + std::to_string(i);
    parts[member] = std::string(100'000 + 33'333 * static_cast<size_t>(i), static_cast<char>('a' + i));
    std::ofstream(cluster_->data_dir(i) / (Named("part") + ".bin"), std::ios::binary) << parts[member];
    argv.insert(argv.end(), {"--part", member + "=" + Named("part") + ".bin"});
  }
  Result<CommandOutput> out = RunCommand(argv);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  const nlohmann::json summary = nlohmann::json::parse(out->output, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << out->output;
  EXPECT_EQ(summary["digest"], GetParam());
  for (int i = 0; i < cluster_->size(); ++i) {
    for (const auto& [member, bytes] : parts) {
      EXPECT_EQ(ReadFile(cluster_->data_dir(i) / Named("gathered") / member), bytes) << "m" << i << " " << member;
    }
  }
}

// The scrub checks each copy with the digest it was received with, and names a bad chunk.
TEST_P(DigestTest, ListVerifyUsesTheRecordedDigest) {
  const std::string name = Named("scrub") + ".bin";
  const std::string path = cluster_->MakePayload(name, 5 * (64 << 10) + 99);
  SendResult r = Send(*cluster_, {path, "--digest", GetParam(), "--chunk", "64KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> list = {GRIDCAST_CLI, "list", "--verify", "--member", "m2", "--cluster",
                                         cluster_->cluster_file()};
  Result<CommandOutput> clean = RunCommand(list);
  ASSERT_TRUE(clean.ok());
  EXPECT_EQ(clean->exit_code, 0) << clean->output;
  EXPECT_NE(clean->output.find(name), std::string::npos) << clean->output;
  EXPECT_NE(clean->output.find("chunks " + GetParam() + ", verify: ok"), std::string::npos) << clean->output;
  auto flip = [&] {  // a byte of chunk 4, twice to put it back
    std::fstream f(cluster_->data_dir(2) / name, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(4 * (64 << 10) + 1);
    const char byte = static_cast<char>(f.get());
    f.seekp(4 * (64 << 10) + 1);
    f.put(static_cast<char>(byte ^ 0x7f));
  };
  flip();
  Result<CommandOutput> bad = RunCommand(list);
  flip();
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 1) << bad->output;
  EXPECT_NE(bad->output.find("error: m2: " + name + " has 1 bad chunk(s): 4"), std::string::npos) << bad->output;
}

// The cluster file's digest: is the default of every send to it; a flag overrides it; a name
// no digest has is refused with one line and exit code 2, from the flag or the file.
TEST(DigestDefaults, TheClusterFileChoosesAndBadNamesAreRefused) {
  LocalCluster cluster(GRIDCASTD, "digest-default", 3);
  const std::string path = cluster.MakePayload("d.bin", 300'000);
  const fs::path xxh3_file = cluster.dir() / "xxh3.yaml";
  std::ofstream(xxh3_file) << ReadFile(cluster.cluster_file()) << "digest: xxh3\n";
  fs::permissions(xxh3_file, fs::perms::owner_read | fs::perms::owner_write);
  auto send = [&](const fs::path& cluster_file, std::vector<std::string> extra) {
    std::vector<std::string> argv = {GRIDCAST_CLI, "send", path, "--cluster", cluster_file.string(), "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Result<CommandOutput> out = RunCommand(argv);
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : CommandOutput{};
  };
  CommandOutput by_file = send(xxh3_file, {"--name", "by-file.bin"});
  ASSERT_EQ(by_file.exit_code, 0) << by_file.output;
  EXPECT_EQ(nlohmann::json::parse(by_file.output)["digest"], "xxh3");
  CommandOutput overridden = send(xxh3_file, {"--name", "overridden.bin", "--digest", "sha256"});
  ASSERT_EQ(overridden.exit_code, 0) << overridden.output;
  EXPECT_EQ(nlohmann::json::parse(overridden.output)["digest"], "sha256");
  CommandOutput plain = send(cluster.cluster_file(), {"--name", "plain.bin"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(nlohmann::json::parse(plain.output)["digest"], "sha256");

  CommandOutput bad_flag = send(cluster.cluster_file(), {"--digest", "md5"});
  EXPECT_EQ(bad_flag.exit_code, 2) << bad_flag.output;
  EXPECT_NE(bad_flag.output.find("unknown chunk digest 'md5' (sha256 or xxh3)"), std::string::npos) << bad_flag.output;
  const fs::path bad_file = cluster.dir() / "bad.yaml";
  std::ofstream(bad_file) << ReadFile(cluster.cluster_file()) << "digest: crc32\n";
  fs::permissions(bad_file, fs::perms::owner_read | fs::perms::owner_write);
  CommandOutput bad_in_file = send(bad_file, {});
  EXPECT_EQ(bad_in_file.exit_code, 2) << bad_in_file.output;
  EXPECT_NE(bad_in_file.output.find("digest: unknown chunk digest 'crc32'"), std::string::npos) << bad_in_file.output;
  for (int i = 1; i < cluster.size(); ++i) {
    EXPECT_EQ(FileSha256(cluster.data_dir(i) / "by-file.bin"), FileSha256(path));
    EXPECT_FALSE(fs::exists(cluster.data_dir(i) / "d.bin"));
  }
}

}  // namespace
}  // namespace gridcast
