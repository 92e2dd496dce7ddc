// An allgather's bundle (daemon/store/allgather_bundle.h): the parts' checks, seeding a
// member's own part into its store with its signed batches of digests, and the split into NAME/.
#include "daemon/store/allgather_bundle.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "common/chunk_digest.h"
#include "daemon/store/digest_log.h"
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
    for (uint64_t c = 0; c < first; ++c) expected_digests_.push_back(HashChunk(identity_.digest, BundleChunk(c)));
  }
  std::span<const uint8_t> BundleChunk(uint64_t c) const {
    return {reinterpret_cast<const uint8_t*>(bundle_.data()) + c * kChunk, kChunk};
  }
  DigestBatches Rule() const {
    std::vector<uint64_t> segments;
    for (const BundlePart& part : parts_) segments.push_back(part.chunks);
    return DigestBatches(kChunk, segments);
  }
  // The bundle's store, checking chunks against a log of the parts' batches.
  std::unique_ptr<PayloadStore> OpenBundle() {
    Result<std::unique_ptr<PayloadStore>> store =
        PayloadStore::OpenForReceive((dir_ / "data").string(), "g.allgather", identity_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    Result<std::unique_ptr<DigestLog>> log = DigestLog::OpenUnnamed(dir_.string(), identity_.digest, Rule(), SystemFileIo());
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    (*store)->ExpectDigestsFrom(std::move(*log));
    return std::move(*store);
  }
  Status Seed(PayloadStore& store, size_t part, const SigningKey& key) {
    const int fd = open(parts_[part].path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    const Status seeded = SeedPart(store, fd, parts_[part], Rule(), key, plan_);
    close(fd);
    return seeded;
  }

  fs::path dir_;
  std::vector<std::string> contents_;
  std::vector<BundlePart> parts_;
  std::string bundle_;
  std::vector<Digest> expected_digests_;  // of the padded bundle's chunks
  const PlanId plan_ = PlanId::Random();
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
  std::unique_ptr<PayloadStore> store = OpenBundle();
  // This member holds part 2: seeding signs its batches with the holder's key, records them and
  // marks its chunks.
  const Result<SigningKey> own_key = SigningKey::Generate();
  ASSERT_TRUE(own_key.ok());
  ASSERT_TRUE(Seed(*store, 2, *own_key).ok());
  EXPECT_EQ(store->VerifiedCount(), 3u);
  const DigestBatches rule = Rule();
  for (uint64_t b = 0; b < rule.count(); ++b) {
    if (rule.SegmentOf(b) != 2) {
      EXPECT_FALSE(store->digest_log()->Has(b)) << b;
      continue;
    }
    Result<DigestBatch> batch = store->digest_log()->Batch(b);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_TRUE(VerifyDigestBatch(own_key->public_key(), plan_, rule, false, *batch).ok());
    EXPECT_FALSE(batch->closing.has_value());  // a part closes nothing
    for (size_t i = 0; i < batch->digests.size(); ++i) EXPECT_EQ(batch->digests[i], expected_digests_[batch->first_chunk + i]);
  }
  // Part 0 arrives as a transfer would bring it: its holder's batch, then its chunks.
  const Result<SigningKey> other_key = SigningKey::Generate();
  ASSERT_TRUE(other_key.ok());
  DigestBatch first;
  first.index = 0;
  first.first_chunk = 0;
  first.kind = identity_.digest;
  first.digests = {expected_digests_[0], expected_digests_[1]};
  SignDigestBatch(*other_key, plan_, first);
  ASSERT_TRUE(store->digest_log()->Record(first).ok());
  for (uint64_t c = 0; c < 2; ++c) ASSERT_TRUE(store->WriteChunk(c, BundleChunk(c)).ok());
  ASSERT_TRUE(store->Complete());
  Result<Digest> list = store->Finalize(false);
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(*list, ChunkListDigest(identity_.digest, expected_digests_));
  store.reset();
  ASSERT_TRUE(SplitBundle((dir_ / "data").string(), "g.allgather", parts_, kChunk, "t", false).ok());
  for (size_t i = 0; i < parts_.size(); ++i) {
    std::ifstream in(dir_ / "data" / "g" / parts_[i].name, std::ios::binary);
    ASSERT_TRUE(in) << parts_[i].name;
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), contents_[i]) << parts_[i].name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "data" / "g.allgather"));
}

// A part is read as it is seeded, at Prepare: one whose size is no longer the one described is
// refused, naming it, and nothing of it is held.
TEST_F(AllgatherBundleTest, APartOfAnotherSizeIsNotSeeded) {
  MakeParts();
  std::unique_ptr<PayloadStore> store = OpenBundle();
  const Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  WriteFile("part0", contents_[0].substr(0, 100));
  const Status seeded = Seed(*store, 0, *key);
  EXPECT_EQ(seeded.code(), StatusCode::kDataLoss);
  EXPECT_NE(seeded.message().find("changed"), std::string::npos) << seeded.message();
  EXPECT_EQ(store->VerifiedCount(), 0u);
  EXPECT_FALSE(store->digest_log()->Has(0));
}

}  // namespace
}  // namespace gridcast
