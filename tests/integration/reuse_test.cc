// Re-staging what changed (docs/delta.md), with real daemons on loopback: after each base change
// of `gridcast bench --base-change` every member holds the new payload, having received only
// what its earlier copy lacked; `--no-reuse` moves everything; pull and hybrid members announce
// what they took; `--base` and directories; a corrupt earlier copy, members holding different
// versions and an earlier copy that is a directory each get what they lack; a member killed
// mid-send keeps its old copy whole and resumes.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "common/splitmix64.h"
#include "delta/base_change.h"
#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunk = 64 << 10;
constexpr uint64_t kSize = 6 << 20;

std::vector<uint8_t> RandomPayload(uint64_t size, uint64_t seed) {
  std::vector<uint8_t> bytes(size);
  SplitMix64 random(seed);
  FillPseudoRandom(bytes, random);
  return bytes;
}

void WriteBytes(const fs::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Chunks of `payload` whose bytes appear nowhere in `old` at a chunk's size: what a member
// holding `old` must receive (the last chunk may be shorter).
uint64_t BytesToMove(std::span<const uint8_t> old, std::span<const uint8_t> payload) {
  const std::string_view haystack(reinterpret_cast<const char*>(old.data()), old.size());
  uint64_t missing = 0;
  for (uint64_t offset = 0; offset < payload.size(); offset += kChunk) {
    const uint64_t size = std::min<uint64_t>(kChunk, payload.size() - offset);
    const std::string_view chunk(reinterpret_cast<const char*>(payload.data() + offset), size);
    if (haystack.find(chunk) == std::string_view::npos) missing += size;
  }
  return missing;
}

class ReuseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new LocalCluster(GRIDCASTD, "reuse", 4); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static int receivers() { return cluster_->size() - 1; }
  // Sends `bytes` as `name` (from the source's payload directory), checking every copy.
  static SendResult SendBytes(const std::string& name, std::span<const uint8_t> bytes,
                              std::vector<std::string> extra = {}) {
    const fs::path path = cluster_->dir() / "payloads" / name;
    WriteBytes(path, bytes);
    std::vector<std::string> args = {path.string(), "--chunk", "64KiB"};
    // Pushes run one plan whatever the host: no swarm, resends only after a loss.
    if (std::find(extra.begin(), extra.end(), "--mode") == extra.end()) args.insert(args.end(), {"--algo", "multilane"});
    args.insert(args.end(), extra.begin(), extra.end());
    SendResult r = Send(*cluster_, args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(r.json.is_object() && r.json["verified"].get<bool>()) << r.output;
    ExpectEverywhere(*cluster_, path.string(), name);
    return r;
  }
  static LocalCluster* cluster_;
};
LocalCluster* ReuseTest::cluster_ = nullptr;

TEST_F(ReuseTest, EveryBaseChangeMovesOnlyWhatChanged) {
  for (BaseChange kind : kAllBaseChanges) {
    const std::string name = "change-" + std::string(BaseChangeName(kind)) + ".bin";
    SCOPED_TRACE(name);
    const std::vector<uint8_t> base = RandomPayload(kSize, 7);
    const SendResult first = SendBytes(name, base);
    EXPECT_EQ(first.json["moved_bytes"].get<uint64_t>(), kSize * receivers()) << first.output;
    EXPECT_EQ(first.json["reused_bytes"].get<uint64_t>(), 0u) << first.output;

    const std::vector<Edit> edits = BaseChangeEdits(kind, kSize);
    const std::vector<uint8_t> changed = ApplyEdits(base, edits, 11);
    const SendResult second = SendBytes(name, changed);
    const uint64_t to_move = BytesToMove(base, changed) * receivers();
    // Each member receives each chunk it lacks once (a resend on loopback is rare: one allowed).
    EXPECT_GE(second.json["moved_bytes"].get<uint64_t>(), to_move) << second.output;
    EXPECT_LE(second.json["moved_bytes"].get<uint64_t>(), to_move + kChunk) << second.output;
    EXPECT_EQ(second.json["reused_bytes"].get<uint64_t>(), changed.size() * receivers() - to_move) << second.output;
    // The search finds all but the chunks an edit touches.
    uint64_t touched = 0;
    for (const Edit& edit : edits) touched += edit.inserted + 2 * kChunk;
    EXPECT_LE(to_move, touched * receivers());
  }
}

// Pull and hybrid members announce the pieces they took instead of downloading them.
TEST_F(ReuseTest, PullAndHybridMembersAnnounceWhatTheyTook) {
  for (const char* mode : {"pull", "hybrid"}) {
    SCOPED_TRACE(mode);
    const std::string name = std::string("swarm-") + mode + ".bin";
    const std::vector<uint8_t> base = RandomPayload(kSize, 15);
    SendBytes(name, base, {"--mode", mode});
    const std::vector<uint8_t> changed = ApplyEdits(base, BaseChangeEdits(BaseChange::kScattered, kSize), 16);
    const SendResult second = SendBytes(name, changed, {"--mode", mode});
    const uint64_t to_move = BytesToMove(base, changed) * receivers();
    EXPECT_EQ(second.json["reused_bytes"].get<uint64_t>(), changed.size() * receivers() - to_move) << second.output;
    // BitTorrent requests blocks, and a piece may come twice near the end: bounded, not exact.
    EXPECT_GE(second.json["moved_bytes"].get<uint64_t>(), to_move) << second.output;
    EXPECT_LE(second.json["moved_bytes"].get<uint64_t>(), 2 * to_move) << second.output;
  }
}

TEST_F(ReuseTest, NoReuseMovesEveryByte) {
  const std::vector<uint8_t> base = RandomPayload(kSize, 8);
  SendBytes("fresh.bin", base);
  const std::vector<uint8_t> changed = ApplyEdits(base, BaseChangeEdits(BaseChange::kInsert, kSize), 12);
  const SendResult second = SendBytes("fresh.bin", changed, {"--no-reuse"});
  EXPECT_GE(second.json["moved_bytes"].get<uint64_t>(), changed.size() * receivers()) << second.output;
  EXPECT_EQ(second.json["reused_bytes"].get<uint64_t>(), 0u) << second.output;
}

// --base names the earlier copy: another version kept under another name. A base outside the
// data directory is refused, named; a member without the base receives everything.
TEST_F(ReuseTest, ABaseNamesTheEarlierCopyAndMustBeBelowTheDataDirectory) {
  const std::vector<uint8_t> v1 = RandomPayload(kSize, 17);
  SendBytes("base-v1.bin", v1);
  fs::remove(cluster_->data_dir(3) / "base-v1.bin");
  const std::vector<uint8_t> v2 = ApplyEdits(v1, BaseChangeEdits(BaseChange::kInsert, kSize), 18);
  const SendResult r = SendBytes("base-v2.bin", v2, {"--base", "base-v1.bin"});
  const uint64_t to_move = BytesToMove(v1, v2) * 2 + v2.size();
  EXPECT_GE(r.json["moved_bytes"].get<uint64_t>(), to_move) << r.output;
  EXPECT_LE(r.json["moved_bytes"].get<uint64_t>(), to_move + kChunk) << r.output;
  EXPECT_EQ(r.json["reused_bytes"].get<uint64_t>(), v2.size() * 3 - to_move) << r.output;
  EXPECT_EQ(FileSha256(cluster_->data_dir(1) / "base-v1.bin"), FileSha256(cluster_->dir() / "payloads" / "base-v1.bin"));

  for (const char* outside : {"../m0/base-v1.bin", "/etc/passwd"}) {
    SendResult refused = Send(*cluster_, {(cluster_->dir() / "payloads" / "base-v2.bin").string(), "--name",
                                          "base-v3.bin", "--base", outside});
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_NE(refused.output.find("--base"), std::string::npos) << refused.output;
    EXPECT_FALSE(fs::exists(cluster_->data_dir(1) / "base-v3.bin"));
  }
}

// A directory sent again after edits: members search their unpacked tree (read in place as
// the archive the source packs from it), so the unchanged files move nothing although the
// archive's offsets shift.
TEST_F(ReuseTest, ADirectoryMovesOnlyTheFilesThatChanged) {
  const fs::path tree = cluster_->dir() / "payloads" / "tree";
  fs::create_directories(tree / "sub");
  uint64_t total = 0;
  for (int i = 0; i < 40; ++i) {
    const std::vector<uint8_t> bytes = RandomPayload(60'000 + 3'000 * static_cast<uint64_t>(i), 100 + i);
    WriteBytes(tree / (i % 2 ? "sub" : ".") / fmt::format("f{:02}.bin", i), bytes);
    total += bytes.size();
  }
  SendResult first = Send(*cluster_, {tree.string(), "--chunk", "64KiB", "--algo", "multilane"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // One file edited in its middle, one added, one removed.
  std::vector<uint8_t> edited = RandomPayload(60'000 + 3'000 * 10, 110);
  edited[40'000] ^= 1;
  WriteBytes(tree / "f10.bin", edited);
  WriteBytes(tree / "sub" / "new.bin", RandomPayload(70'000, 200));
  fs::remove(tree / "f20.bin");
  SendResult second = Send(*cluster_, {tree.string(), "--chunk", "64KiB", "--algo", "multilane"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  // The edited and the added file, the removed one's place and the two directories whose
  // headers changed, with the chunks around each (where chunks straddle a header depends on
  // the pax records' lengths): a few chunks per change, not the tree (74 chunks).
  EXPECT_LE(second.json["moved_bytes"].get<uint64_t>(), uint64_t{3} * (10 * kChunk + 70'000)) << second.output;
  EXPECT_GE(second.json["reused_bytes"].get<uint64_t>(), uint64_t{3} * (total - 10 * kChunk)) << second.output;
  for (int i = 1; i < cluster_->size(); ++i) {
    const fs::path copy = cluster_->data_dir(i) / "tree";
    EXPECT_EQ(FileSha256(copy / "f10.bin"), FileSha256(tree / "f10.bin"));
    EXPECT_EQ(FileSha256(copy / "sub" / "new.bin"), FileSha256(tree / "sub" / "new.bin"));
    EXPECT_FALSE(fs::exists(copy / "f20.bin"));
    EXPECT_FALSE(fs::exists(cluster_->data_dir(i) / "tree.tar"));
    for (const auto& entry : fs::recursive_directory_iterator(tree)) {
      if (entry.is_regular_file()) {
        EXPECT_EQ(FileSha256(copy / fs::relative(entry.path(), tree)), FileSha256(entry.path())) << entry.path();
      }
    }
  }
}

// Half the members hold version 1 and half version 2: all end on version 3, each having
// received what its own version lacks.
TEST_F(ReuseTest, MembersOnTwoVersionsAllEndOnTheThird) {
  const std::string name = "versions.bin";
  const std::vector<uint8_t> v1 = RandomPayload(kSize, 19);
  SendBytes(name, v1);
  const std::vector<uint8_t> v2 = ApplyEdits(v1, BaseChangeEdits(BaseChange::kAppend, kSize), 20);
  WriteBytes(cluster_->data_dir(2) / name, v2);
  WriteBytes(cluster_->data_dir(3) / name, v2);
  const std::vector<uint8_t> v3 = ApplyEdits(v2, BaseChangeEdits(BaseChange::kPrepend, v2.size()), 21);
  const SendResult r = SendBytes(name, v3);
  const uint64_t to_move = BytesToMove(v1, v3) + 2 * BytesToMove(v2, v3);
  EXPECT_GT(BytesToMove(v1, v3), BytesToMove(v2, v3));
  EXPECT_GE(r.json["moved_bytes"].get<uint64_t>(), to_move) << r.output;
  EXPECT_LE(r.json["moved_bytes"].get<uint64_t>(), to_move + kChunk) << r.output;
  EXPECT_EQ(r.json["reused_bytes"].get<uint64_t>(), v3.size() * receivers() - to_move) << r.output;
}

// A member killed while it receives a new version keeps its old copy whole (the new one is
// assembled beside it); restarted, it is prepared again, resumes from what it verified (the
// chunks it took included) and ends on the new version.
TEST(ReuseRestart, AKilledMemberKeepsItsOldCopyWholeAndResumes) {
  // Small windows and a chain make the second send long enough to interrupt on loopback.
  // Between the kill and the restart the test hashes two 160 MiB files: the source waits.
  LocalCluster cluster(GRIDCASTD, "reuse-restart", 3, {"--window", "4", "--member-lost-after", "30"});
  const fs::path path = cluster.dir() / "payloads" / "grown.bin";
  const std::vector<uint8_t> v1 = RandomPayload(96 << 20, 22);
  WriteBytes(path, v1);
  const std::vector<std::string> send = {GRIDCAST_CLI, "send", path.string(), "--cluster", cluster.cluster_file(),
                                         "--algo", "chain", "--chunk", "256KiB", "--json"};
  Result<CommandOutput> first = RunCommand(send);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->exit_code, 0) << first->output;
  std::vector<uint8_t> v2 = v1;
  const std::vector<uint8_t> grown = RandomPayload(160 << 20, 23);
  v2.insert(v2.end(), grown.begin(), grown.end());
  WriteBytes(path, v2);

  Result<ChildProcess> sender = ChildProcess::Start(send, (cluster.dir() / "send.out").string());
  ASSERT_TRUE(sender.ok());
  // m2, last in the chain, holds v1's chunks from Prepare on; kill it once it has received some.
  ControlClient m2(cluster.config().members[2].control_address, cluster.config().secret);
  const uint64_t taken = v1.size() / (256 << 10);
  uint64_t done_before_kill = 0;
  uint64_t total = 0;
  for (int attempt = 0; attempt < 4000 && done_before_kill <= taken + 8; ++attempt) {
    v1::StatusResponse status;
    if (m2.GetStatus(v1::StatusRequest(), &status).ok() && status.plans_size() == 1) {
      done_before_kill = status.plans(0).chunks_done();
      total = status.plans(0).chunks_total();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GT(done_before_kill, taken + 8);
  ASSERT_LT(done_before_kill, total) << "finished before it could be interrupted";
  cluster.Kill(2);
  WriteBytes(cluster.dir() / "v1.bin", v1);
  EXPECT_EQ(FileSha256(cluster.data_dir(2) / "grown.bin"), FileSha256(cluster.dir() / "v1.bin"));
  EXPECT_TRUE(fs::exists(cluster.data_dir(2) / "grown.bin.part"));
  cluster.Restart(2);
  EXPECT_EQ(sender->Wait(), 0) << ReadFile(cluster.dir() / "send.out");
  const nlohmann::json summary = nlohmann::json::parse(ReadFile(cluster.dir() / "send.out"), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << ReadFile(cluster.dir() / "send.out");
  EXPECT_TRUE(summary["verified"].get<bool>());
  EXPECT_EQ(FileSha256(cluster.data_dir(2) / "grown.bin"), FileSha256(path));
  EXPECT_FALSE(fs::exists(cluster.data_dir(2) / "grown.bin.part"));
  // Resumed, not received again: what m2 had verified before the kill was there after it, to
  // be checked as the digests came.
  const std::string log = ReadFile(cluster.log(2));
  const size_t at = log.rfind(" verified before to check");
  ASSERT_NE(at, std::string::npos) << log;
  const size_t start = log.rfind(", ", at) + 2;
  EXPECT_GE(std::stoull(log.substr(start, at - start)) + 4, done_before_kill) << log;
}

// m1's earlier copy is corrupt in its first chunk, m2 holds another version than m3, and m3's
// is whole: each takes only chunks whose bytes hash right and receives the rest.
TEST_F(ReuseTest, MembersWithCorruptOrDifferentEarlierCopiesEachGetWhatTheyLack) {
  const std::string name = "mixed.bin";
  const std::vector<uint8_t> base = RandomPayload(kSize, 9);
  SendBytes(name, base);
  std::vector<uint8_t> corrupt = base;
  for (uint64_t i = 0; i < 100; ++i) corrupt[1000 + i] ^= 0x5a;
  WriteBytes(cluster_->data_dir(1) / name, corrupt);
  const std::vector<uint8_t> other = ApplyEdits(base, BaseChangeEdits(BaseChange::kPrepend, kSize), 13);
  WriteBytes(cluster_->data_dir(2) / name, other);

  const std::vector<uint8_t> changed = ApplyEdits(base, BaseChangeEdits(BaseChange::kScattered, kSize), 14);
  const SendResult r = SendBytes(name, changed);
  const uint64_t to_move = BytesToMove(corrupt, changed) + BytesToMove(other, changed) + BytesToMove(base, changed);
  EXPECT_GT(BytesToMove(corrupt, changed), BytesToMove(base, changed));
  EXPECT_GE(r.json["moved_bytes"].get<uint64_t>(), to_move) << r.output;
  EXPECT_LE(r.json["moved_bytes"].get<uint64_t>(), to_move + kChunk) << r.output;
  EXPECT_EQ(r.json["reused_bytes"].get<uint64_t>(), changed.size() * receivers() - to_move) << r.output;
}

// A directory where the earlier copy would be is not read as one (nor replaced): that member
// fails naming it, the others take what they hold.
TEST_F(ReuseTest, AnEarlierCopyThatIsADirectoryIsNotABase) {
  const std::string name = "dir-base.bin";
  fs::create_directories(cluster_->data_dir(3) / name / "inside");
  const fs::path path = cluster_->dir() / "payloads" / name;
  WriteBytes(path, RandomPayload(kSize / 4, 10));
  SendResult r = Send(*cluster_, {path.string(), "--chunk", "64KiB"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  ASSERT_TRUE(r.json.is_object()) << r.output;
  EXPECT_NE(r.json["error"].get<std::string>().find("m3"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_directory(cluster_->data_dir(3) / name / "inside"));
  fs::remove_all(cluster_->data_dir(3) / name);
}

}  // namespace
}  // namespace gridcast
