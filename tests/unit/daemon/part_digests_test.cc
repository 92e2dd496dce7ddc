// An allgather's digests (docs/streamed-digests.md, step 8): each part's holder signs its own
// part's batches with a key it derives from a secret of its own and the coordinator's nonce
// (Holdings::PartKey), and a member takes a part's batch only with that part's key.
#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <fstream>

#include "common/hex.h"
#include "daemon/executor/digest_stream.h"
#include "daemon/participant/holdings.h"
#include "daemon/participant/plan_payload.h"
#include "test_dir.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kChunk = 256 << 10;

class PartDigestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("gridcast-part-digests");
    fs::create_directories(dir_);
    identity_.size_bytes = 9 * kChunk;
    identity_.chunk_bytes = kChunk;
    identity_.digest = ChunkDigest::kXxh3;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Batch `index` of `rule` with made-up digests, signed by `key` for `plan`.
  static DigestBatch Signed(const DigestBatches& rule, uint64_t index, const SigningKey& key, const PlanId& plan) {
    DigestBatch batch;
    batch.index = index;
    batch.first_chunk = rule.RangeOf(index).first;
    batch.kind = ChunkDigest::kXxh3;
    batch.digests.assign(rule.RangeOf(index).count, Digest{});
    for (size_t i = 0; i < batch.digests.size(); ++i) batch.digests[i][0] = static_cast<uint8_t>(batch.first_chunk + i);
    SignDigestBatch(key, plan, batch);
    return batch;
  }

  fs::path dir_;
  PayloadIdentity identity_;
  const PlanId plan_ = PlanId::Random();
};

TEST_F(PartDigestsTest, APartsBatchIsTakenOnlyWithThatPartsKey) {
  const std::vector<uint64_t> segments = {4, 0, 5};
  const DigestBatches rule(kChunk, segments);
  std::vector<SigningKey> keys;
  for (int i = 0; i < 3; ++i) keys.push_back(*SigningKey::Generate());
  Result<std::unique_ptr<DigestLog>> log = DigestLog::OpenUnnamed(dir_.string(), identity_.digest, rule, SystemFileIo());
  ASSERT_TRUE(log.ok());
  Result<std::unique_ptr<DigestStream>> stream =
      DigestStream::ForParts(plan_, identity_, rule, {keys[0].public_key(), keys[1].public_key(), keys[2].public_key()},
                             std::move(*log));
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  for (uint64_t b = 0; b < rule.count(); ++b) {
    const size_t owner = rule.SegmentOf(b);
    const size_t forger = owner == 0 ? 2 : 0;
    // Another holder (or a relay holding its key) cannot make a batch of this part...
    const Status forged = (*stream)->Accept(EncodeDigestBatch(Signed(rule, b, keys[forger], plan_)));
    EXPECT_EQ(forged.code(), StatusCode::kDataLoss) << b;
    // ...nor move the holder's own batch into another plan.
    const Status replayed = (*stream)->Accept(EncodeDigestBatch(Signed(rule, b, keys[owner], PlanId::Random())));
    EXPECT_EQ(replayed.code(), StatusCode::kDataLoss) << b;
    EXPECT_FALSE((*stream)->Covers(rule.RangeOf(b).first));
    // The holder's is taken.
    EXPECT_TRUE((*stream)->Accept(EncodeDigestBatch(Signed(rule, b, keys[owner], plan_))).ok()) << b;
    EXPECT_TRUE((*stream)->Covers(rule.RangeOf(b).first));
  }
  EXPECT_TRUE((*stream)->HoldsEvery());
  // Keys that do not match the parts, or parts that do not cut the payload, are refused.
  Result<std::unique_ptr<DigestLog>> other = DigestLog::OpenUnnamed(dir_.string(), identity_.digest, rule, SystemFileIo());
  EXPECT_FALSE(DigestStream::ForParts(plan_, identity_, rule, {keys[0].public_key()}, std::move(*other)).ok());
}

TEST_F(PartDigestsTest, AHolderDerivesTheSameKeyForWhatItDescribedAndNoOtherDoes) {
  std::ofstream(dir_ / "part.bin") << std::string(1000, 'x');
  PayloadDirectories directories{dir_.string(), "", {}};
  RunningPlans running;
  boost::asio::thread_pool closer(1);
  Holdings holder(directories, running, closer, nullptr);
  v1::DescribePartRequest described;
  described.set_path("part.bin");
  described.set_chunk_bytes(kChunk);
  described.set_key_nonce(std::string(Holdings::kPartKeyNonceBytes, '\7'));
  Result<v1::DescribePartResponse> answer = holder.DescribePart(described);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->size_bytes(), 1000u);
  Result<SigningKey> again = holder.PartKey(described, 1000);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(AsString(again->public_key()), answer->digest_key());
  // Another nonce, size, chunk size or daemon (a restart): another key.
  v1::DescribePartRequest other_nonce = described;
  other_nonce.set_key_nonce(std::string(Holdings::kPartKeyNonceBytes, '\10'));
  EXPECT_NE(AsString(holder.PartKey(other_nonce, 1000)->public_key()), answer->digest_key());
  EXPECT_NE(AsString(holder.PartKey(described, 999)->public_key()), answer->digest_key());
  v1::DescribePartRequest other_chunk = described;
  other_chunk.set_chunk_bytes(2 * kChunk);
  EXPECT_NE(AsString(holder.PartKey(other_chunk, 1000)->public_key()), answer->digest_key());
  Holdings restarted(directories, running, closer, nullptr);
  EXPECT_NE(AsString(restarted.PartKey(described, 1000)->public_key()), answer->digest_key());
  // A nonce of another length is refused.
  described.set_key_nonce("short");
  EXPECT_EQ(holder.DescribePart(described).status().code(), StatusCode::kInvalidArgument);
  closer.join();
}

TEST_F(PartDigestsTest, APlansPartsGiveTheRuleAndKeysOrAClearError) {
  v1::Payload payload;
  payload.set_chunk_bytes(kChunk);
  EXPECT_FALSE(PartDigestsOf(payload)->has_value());  // no parts: a broadcast
  const SigningKey key = *SigningKey::Generate();
  for (uint64_t chunks : {3u, 6u}) {
    v1::Part* part = payload.add_parts();
    part->set_name("p" + std::to_string(chunks));
    part->set_chunks(chunks);
    part->set_digest_key(AsString(key.public_key()));
  }
  Result<std::optional<PartDigests>> digests = PartDigestsOf(payload);
  ASSERT_TRUE(digests.ok() && digests->has_value()) << digests.status().ToString();
  EXPECT_EQ((*digests)->rule.segments(), 2u);
  EXPECT_EQ((*digests)->rule.chunks(), 9u);
  EXPECT_EQ((*digests)->keys.size(), 2u);
  payload.mutable_parts(1)->set_digest_key("too short");
  EXPECT_EQ(PartDigestsOf(payload).status().code(), StatusCode::kInvalidArgument);
  payload.mutable_parts(1)->set_digest_key(AsString(key.public_key()));
  payload.set_digest_key(AsString(key.public_key()));
  EXPECT_EQ(PartDigestsOf(payload).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
