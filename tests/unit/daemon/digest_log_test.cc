// DigestLog: verified batches recorded in any order, each chunk's digest read back from memory
// or from the file once the batch left the cache, and the fold equal to the chunk-list digest.
#include "daemon/store/digest_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "tests/unit/daemon/test_dir.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

class DigestLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("gridcast-digest-log");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The digests of a payload of `chunks` chunks, and its batches under `rule` (unsigned: the
  // log trusts its caller).
  static std::vector<Digest> Digests(ChunkDigest kind, uint64_t chunks) {
    std::vector<Digest> digests;
    for (uint64_t c = 0; c < chunks; ++c) {
      const std::string bytes = "chunk " + std::to_string(c);
      digests.push_back(HashChunk(kind, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
    }
    return digests;
  }
  static DigestBatch Batch(const DigestBatches& rule, uint64_t index, ChunkDigest kind,
                             const std::vector<Digest>& digests) {
    const DigestBatches::Range range = rule.RangeOf(index);
    DigestBatch batch;
    batch.index = index;
    batch.first_chunk = range.first;
    batch.kind = kind;
    batch.digests.assign(digests.begin() + static_cast<std::ptrdiff_t>(range.first),
                         digests.begin() + static_cast<std::ptrdiff_t>(range.first + range.count));
    // Stand-ins for what a source sends besides: the log keeps them as they came.
    if (kind == ChunkDigest::kSha256) {
      for (uint64_t c = range.first; c < range.first + range.count; ++c) batch.weak.push_back(uint32_t(c * 31));
    }
    if (index + 1 == rule.count()) batch.closing = DigestClosing{ChunkListDigest(kind, digests), Digest{}};
    batch.signature.fill(static_cast<uint8_t>(index));
    return batch;
  }
  std::unique_ptr<DigestLog> Open(ChunkDigest kind, const DigestBatches& rule) {
    Result<std::unique_ptr<DigestLog>> log = DigestLog::Open((dir_ / "p.chunks").string(), kind, rule, SystemFileIo());
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return std::move(*log);
  }

  fs::path dir_;
};

TEST_F(DigestLogTest, BatchesInAnyOrderFoldToTheChunkListDigest) {
  for (ChunkDigest kind : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    // 16 KiB chunks: 64, 128, 256, 512, then 1,024 a batch; well past the 64 cached batches.
    const uint64_t chunks = 100'000;
    const DigestBatches rule(16 * 1024, chunks);
    ASSERT_GT(rule.count(), DigestLog::kCachedBatches);
    const std::vector<Digest> digests = Digests(kind, chunks);
    std::unique_ptr<DigestLog> log = Open(kind, rule);
    std::vector<uint64_t> order(rule.count());
    for (uint64_t b = 0; b < order.size(); ++b) order[b] = b;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
    for (size_t i = 0; i < order.size(); ++i) {
      ASSERT_FALSE(log->ListDigest()) << i;
      ASSERT_FALSE(log->Has(order[i]));
      ASSERT_TRUE(log->Record(Batch(rule, order[i], kind, digests)).ok());
      ASSERT_TRUE(log->Has(order[i]));
      ASSERT_EQ(log->Closing().has_value(), log->Has(rule.count() - 1)) << i;
    }
    EXPECT_EQ(log->Closing()->chunk_list_digest, ChunkListDigest(kind, digests));
    EXPECT_EQ(log->recorded(), rule.count());
    ASSERT_TRUE(log->ListDigest());
    EXPECT_EQ(*log->ListDigest(), ChunkListDigest(kind, digests));
    // Every digest back, most from the file (the cache holds the last 64 batches).
    for (uint64_t c = 0; c < chunks; c += 97) {
      Result<std::optional<Digest>> digest = log->DigestOf(c);
      ASSERT_TRUE(digest.ok() && digest->has_value()) << c;
      ASSERT_EQ(**digest, digests[c]) << c;
    }
    // The file holds the list as a chunk list encodes it.
    EXPECT_EQ(fs::file_size(dir_ / "p.chunks"), chunks * DigestBytes(kind));
    // A batch long out of the cache comes back as it was recorded, to be passed on.
    for (uint64_t b : {uint64_t{0}, uint64_t{7}, rule.count() - 1}) {
      Result<DigestBatch> back = log->Batch(b);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      const DigestBatch recorded = Batch(rule, b, kind, digests);
      EXPECT_EQ(back->first_chunk, recorded.first_chunk);
      EXPECT_EQ(back->digests, recorded.digests);
      EXPECT_EQ(back->weak, recorded.weak);
      EXPECT_EQ(back->signature, recorded.signature);
      EXPECT_EQ(back->closing, recorded.closing);
    }
  }
}

TEST_F(DigestLogTest, WhatIsNotRecordedIsNotKnownAndRepeatsChangeNothing) {
  const DigestBatches rule(256 * 1024, 100);
  const std::vector<Digest> digests = Digests(ChunkDigest::kSha256, 100);
  std::unique_ptr<DigestLog> log = Open(ChunkDigest::kSha256, rule);
  ASSERT_TRUE(log->Record(Batch(rule, 1, ChunkDigest::kSha256, digests)).ok());
  Result<std::optional<Digest>> before = log->DigestOf(0);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->has_value());
  EXPECT_EQ(**log->DigestOf(5), digests[5]);
  EXPECT_EQ(log->Batch(0).status().code(), StatusCode::kFailedPrecondition);
  // A second copy of a recorded batch (another connection's) is ignored, even a different one.
  DigestBatch again = Batch(rule, 1, ChunkDigest::kSha256, digests);
  again.digests[0][0] ^= 1;
  ASSERT_TRUE(log->Record(again).ok());
  EXPECT_EQ(**log->DigestOf(4), digests[4]);
  EXPECT_EQ(log->recorded(), 1u);
  EXPECT_FALSE(log->DigestOf(100).ok());
  // Not the rule's batches: refused.
  DigestBatch moved = Batch(rule, 2, ChunkDigest::kSha256, digests);
  moved.first_chunk = 13;
  EXPECT_FALSE(log->Record(moved).ok());
  DigestBatch short_batch = Batch(rule, 2, ChunkDigest::kSha256, digests);
  short_batch.digests.pop_back();
  EXPECT_FALSE(log->Record(short_batch).ok());
  EXPECT_FALSE(log->Record(Batch(rule, 2, ChunkDigest::kXxh3, digests)).ok());
  DigestBatch past = Batch(rule, 0, ChunkDigest::kSha256, digests);
  past.index = rule.count();
  EXPECT_FALSE(log->Record(past).ok());
}

TEST_F(DigestLogTest, AnEmptyPayloadsListIsKnownAtOnce) {
  std::unique_ptr<DigestLog> log = Open(ChunkDigest::kXxh3, DigestBatches(256 * 1024, 0));
  ASSERT_TRUE(log->ListDigest());
  EXPECT_EQ(*log->ListDigest(), ChunkListDigest(ChunkDigest::kXxh3, {}));
}

}  // namespace
}  // namespace gridcast
