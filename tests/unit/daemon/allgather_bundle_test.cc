// An allgather's bundle (daemon/store/allgather_bundle.h): the parts' checks, padded hashes,
// seeding a member's own part into its store, and the split into NAME/.
#include "daemon/store/allgather_bundle.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "test_dir.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kChunk = 4096;

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

std::string Padded(std::string bytes) {
  bytes.resize((bytes.size() + kChunk - 1) / kChunk * kChunk, '\0');
  return bytes;
}

class AllgatherBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("gridcast-bundle");
    fs::create_directories(dir_ / "data");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path WriteFile(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }

  // Three parts (1.5 chunks, empty, 3 chunks) back to back; the bundle's identity.
  void MakeParts() {
    contents_ = {RandomBytes(kChunk + kChunk / 2, 1), "", RandomBytes(3 * kChunk, 3)};
    uint64_t first = 0;
    for (uint32_t i = 0; i < contents_.size(); ++i) {
      const uint64_t chunks = (contents_[i].size() + kChunk - 1) / kChunk;
      const fs::path path = WriteFile("part" + std::to_string(i), contents_[i]);
      parts_.push_back({i, "m" + std::to_string(i), contents_[i].size(), first, chunks, path.string()});
      first += chunks;
      bundle_ += Padded(contents_[i]);
    }
    identity_.size_bytes = bundle_.size();
    identity_.chunk_bytes = kChunk;
    identity_.digest = ChunkDigest::kXxh3;  // the bundle's rules hold whatever the digest
    for (uint64_t c = 0; c < first; ++c) {
      identity_.chunk_hashes.push_back(
          HashChunk(identity_.digest, {reinterpret_cast<const uint8_t*>(bundle_.data()) + c * kChunk, kChunk}));
    }
    identity_.sha256 = identity_.ListDigest();
  }

  fs::path dir_;
  std::vector<std::string> contents_;
  std::vector<BundlePart> parts_;
  std::string bundle_;
  PayloadIdentity identity_;
};

TEST_F(AllgatherBundleTest, PartsMustFollowEachOtherAndFillTheBundle) {
  MakeParts();
  EXPECT_TRUE(CheckBundleParts(parts_, 3, kChunk, bundle_.size()).ok());
  auto refused = [&](std::vector<BundlePart> parts, uint32_t members = 3, uint64_t size = 0) {
    return !CheckBundleParts(parts, members, kChunk, size == 0 ? bundle_.size() : size).ok();
  };
  EXPECT_TRUE(refused(parts_, 2));                         // a holder beyond the members
  EXPECT_TRUE(refused(parts_, 3, bundle_.size() + kChunk));  // a chunk no part holds
  std::vector<BundlePart> bad = parts_;
  bad[1].member = 0;  // one holder, two parts
  EXPECT_TRUE(refused(bad));
  bad = parts_;
  bad[2].name = "m0";  // two parts, one name
  EXPECT_TRUE(refused(bad));
  for (const char* name : {"a/b", "..", "", "."}) {
    bad = parts_;
    bad[0].name = name;
    EXPECT_TRUE(refused(bad)) << name;
  }
  bad = parts_;
  bad[0].chunks = 1;  // 1.5 chunks of bytes
  EXPECT_TRUE(refused(bad));
  bad = parts_;
  std::swap(bad[0].first_chunk, bad[2].first_chunk);  // out of order
  EXPECT_TRUE(refused(bad));
  // Two parts of 2^63 one-byte chunks would wrap the count around to an empty bundle's.
  const uint64_t half = uint64_t{1} << 63;
  EXPECT_FALSE(CheckBundleParts({{0, "a", half, 0, half, "a"}, {1, "b", half, half, half, "b"}}, 2, 1, 0).ok());
  EXPECT_TRUE(DirectoryOfBundle("runs/x.allgather").ok());
  EXPECT_EQ(*DirectoryOfBundle("runs/x.allgather"), "runs/x");
  EXPECT_FALSE(DirectoryOfBundle("x.tar").ok());
  EXPECT_FALSE(DirectoryOfBundle(".allgather").ok());
}

TEST_F(AllgatherBundleTest, SeededPartsAndReceivedOnesSplitIntoTheOriginals) {
  MakeParts();
  Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive((dir_ / "data").string(), "g.allgather", identity_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // This member holds part 2: its padded hashes are the bundle's, and seeding marks its chunks.
  const int fd = open(parts_[2].path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  Result<std::vector<Digest>> hashes = HashPaddedChunks(fd, parts_[2].size_bytes, kChunk, identity_.digest);
  ASSERT_TRUE(hashes.ok());
  EXPECT_EQ(*hashes, std::vector<Digest>(identity_.chunk_hashes.begin() + 2, identity_.chunk_hashes.end()));
  ASSERT_TRUE(SeedPart(**store, fd, parts_[2]).ok());
  close(fd);
  EXPECT_EQ((*store)->VerifiedCount(), 3u);
  // The rest arrives as a transfer would bring it.
  for (uint64_t c = 0; c < 2; ++c) {
    ASSERT_TRUE((*store)->WriteChunk(c, {reinterpret_cast<const uint8_t*>(bundle_.data()) + c * kChunk, kChunk}).ok());
  }
  ASSERT_TRUE((*store)->Complete());
  ASSERT_TRUE((*store)->Finalize(false).ok());
  store->reset();
  ASSERT_TRUE(SplitBundle((dir_ / "data").string(), "g.allgather", parts_, kChunk, "t", false).ok());
  for (size_t i = 0; i < parts_.size(); ++i) {
    std::ifstream in(dir_ / "data" / "g" / parts_[i].name, std::ios::binary);
    ASSERT_TRUE(in) << parts_[i].name;
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), contents_[i]) << parts_[i].name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "data" / "g.allgather"));
}

TEST_F(AllgatherBundleTest, APartThatChangedIsNotSeeded) {
  MakeParts();
  Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive((dir_ / "data").string(), "g.allgather", identity_);
  ASSERT_TRUE(store.ok());
  std::string changed = contents_[0];
  changed[10] ^= 1;
  WriteFile("part0", changed);
  const int fd = open(parts_[0].path.c_str(), O_RDONLY);
  const Status seeded = SeedPart(**store, fd, parts_[0]);
  close(fd);
  EXPECT_EQ(seeded.code(), StatusCode::kDataLoss);
  EXPECT_NE(seeded.message().find("changed"), std::string::npos) << seeded.message();
  EXPECT_EQ((*store)->VerifiedCount(), 0u);
  // A file shorter than described: its holder cannot have it.
  WriteFile("part0", contents_[0].substr(0, 100));
  const int short_fd = open(parts_[0].path.c_str(), O_RDONLY);
  EXPECT_FALSE(HashPaddedChunks(short_fd, parts_[0].size_bytes, kChunk, identity_.digest).ok());
  close(short_fd);
}

}  // namespace
}  // namespace gridcast
