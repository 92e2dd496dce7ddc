// Signed digest batches: the rule cutting chunks into batches (its ramp, its edges, from one
// chunk to 2^30), Ed25519 signatures, and batches and trailers refused when anything in them
// or around them changed.
#include "common/digest_batches.h"

#include <gtest/gtest.h>

#include <random>

namespace gridcast {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;

// Every chunk in exactly one batch, in order, each batch within its bounds, BatchOf and RangeOf
// agreeing: walked over all chunks.
void ExpectConsistent(const DigestBatches& rule, uint64_t chunk_bytes) {
  uint64_t next = 0;
  for (uint64_t b = 0; b < rule.count(); ++b) {
    const DigestBatches::Range range = rule.RangeOf(b);
    ASSERT_EQ(range.first, next) << b;
    ASSERT_GE(range.count, 1u) << b;
    ASSERT_LE(range.count, kMaxChunksPerBatch) << b;
    if (range.count > 1) {
      ASSERT_LE(range.count * chunk_bytes, kDefaultMaxBatchBytes) << b;
    }
    ASSERT_EQ(rule.BatchOf(range.first), b);
    ASSERT_EQ(rule.BatchOf(range.first + range.count - 1), b);
    next += range.count;
  }
  EXPECT_EQ(next, rule.chunks());
}

TEST(DigestBatchesTest, TheFirstBatchIsAMebibyteAndEachNextTwiceAsLargeUpToTheMost) {
  const DigestBatches rule(256 * kKiB, 1000);
  std::vector<uint32_t> counts;
  for (uint64_t b = 0; b < 6; ++b) counts.push_back(rule.RangeOf(b).count);
  EXPECT_EQ(counts, (std::vector<uint32_t>{4, 8, 16, 32, 64, 64}));
  ExpectConsistent(rule, 256 * kKiB);
  EXPECT_EQ(rule.count(), 4 + (1000 - 60 + 63) / 64);
  EXPECT_EQ(rule.RangeOf(rule.count() - 1).count, (1000 - 60) % 64);  // the last is short

  // 16 KiB chunks: at most 1,024 a batch (16 MiB).
  const DigestBatches small(16 * kKiB, 100'000);
  EXPECT_EQ(small.RangeOf(0).count, 64u);
  EXPECT_EQ(small.RangeOf(4).count, 1024u);
  ExpectConsistent(small, 16 * kKiB);
  // 1 KiB chunks: the 1,024-chunk cap binds before the bytes do.
  const DigestBatches tiny(1 * kKiB, 5000);
  EXPECT_EQ(tiny.RangeOf(0).count, 1024u);
  ExpectConsistent(tiny, 1 * kKiB);
}

// Segments (an allgather's parts): each is cut as a payload of its own, no batch crosses into
// the next, empty segments take no batch, and nothing closes the list.
TEST(DigestBatchesTest, SegmentsAreEachCutAsAPayloadOfTheirOwn) {
  const std::vector<uint64_t> segments = {7, 0, 1000, 1, 0, 12, 0};
  const DigestBatches rule(256 * kKiB, segments);
  ExpectConsistent(rule, 256 * kKiB);
  EXPECT_EQ(rule.segments(), segments.size());
  EXPECT_FALSE(rule.ClosesList());
  uint64_t first_chunk = 0;
  uint64_t first_batch = 0;
  for (size_t s = 0; s < segments.size(); ++s) {
    const DigestBatches alone(256 * kKiB, segments[s]);
    for (uint64_t b = 0; b < alone.count(); ++b) {
      const DigestBatches::Range expected{first_chunk + alone.RangeOf(b).first, alone.RangeOf(b).count};
      ASSERT_EQ(rule.RangeOf(first_batch + b), expected) << "segment " << s << " batch " << b;
      ASSERT_EQ(rule.SegmentOf(first_batch + b), s);
      EXPECT_FALSE(rule.Closes(first_batch + b));
    }
    first_chunk += segments[s];
    first_batch += alone.count();
  }
  EXPECT_EQ(rule.count(), first_batch);
  EXPECT_EQ(rule.chunks(), first_chunk);
  // One segment is a payload of one source, and its last batch closes the list.
  const DigestBatches single(256 * kKiB, 1000);
  EXPECT_TRUE(single.Closes(single.count() - 1));
  EXPECT_FALSE(single.Closes(0));
  // Random cuts, against the consistency walk.
  std::mt19937_64 random(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<uint64_t> cut(1 + random() % 6);
    for (uint64_t& chunks : cut) chunks = random() % 3 == 0 ? 0 : random() % 3000;
    const uint64_t chunk_bytes = 64 * kKiB << (random() % 5);
    ExpectConsistent(DigestBatches(chunk_bytes, cut), chunk_bytes);
  }
}

TEST(DigestBatchesTest, EdgesFromNoChunkToABillion) {
  EXPECT_EQ(DigestBatches(256 * kKiB, 0).count(), 0u);
  const DigestBatches one(256 * kKiB, 1);
  EXPECT_EQ(one.count(), 1u);
  EXPECT_EQ(one.RangeOf(0), (DigestBatches::Range{0, 1}));
  // A payload ending inside the ramp.
  const DigestBatches short_ramp(256 * kKiB, 12);
  EXPECT_EQ(short_ramp.count(), 2u);
  EXPECT_EQ(short_ramp.RangeOf(1), (DigestBatches::Range{4, 8}));
  const DigestBatches ends_in_second(256 * kKiB, 7);
  EXPECT_EQ(ends_in_second.RangeOf(1), (DigestBatches::Range{4, 3}));
  ExpectConsistent(ends_in_second, 256 * kKiB);
  // Chunks of a batch's bytes or more: one chunk a batch.
  for (uint64_t chunk : {16 * kMiB, 64 * kMiB}) {
    const DigestBatches large(chunk, 10);
    EXPECT_EQ(large.count(), 10u);
    ExpectConsistent(large, chunk);
  }
  const DigestBatches mid(4 * kMiB, 100);
  EXPECT_EQ(mid.RangeOf(0).count, 1u);
  EXPECT_EQ(mid.RangeOf(3).count, 2u);
  EXPECT_EQ(mid.RangeOf(4).count, 4u);
  ExpectConsistent(mid, 4 * kMiB);
  // 2^30 chunks: constant time, the last chunk in the last batch.
  const uint64_t billion = uint64_t{1} << 30;
  const DigestBatches huge(16 * kKiB, billion);
  EXPECT_EQ(huge.BatchOf(billion - 1), huge.count() - 1);
  const DigestBatches::Range last = huge.RangeOf(huge.count() - 1);
  EXPECT_EQ(last.first + last.count, billion);
  EXPECT_EQ(huge.count(), 4 + (billion - (64 + 128 + 256 + 512) + 1023) / 1024);
  std::mt19937_64 random(3);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t chunk = random() % billion;
    const DigestBatches::Range range = huge.RangeOf(huge.BatchOf(chunk));
    ASSERT_GE(chunk, range.first);
    ASSERT_LT(chunk, range.first + range.count);
  }
}

class SignedBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<SigningKey> key = SigningKey::Generate();
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    key_.emplace(std::move(*key));
  }
  // Batch `index` of rule_ for plan_, signed.
  DigestBatch Batch(uint64_t index, ChunkDigest kind = ChunkDigest::kSha256, bool weak = false) {
    const DigestBatches::Range range = rule_.RangeOf(index);
    DigestBatch batch;
    batch.index = index;
    batch.first_chunk = range.first;
    batch.kind = kind;
    for (uint64_t c = range.first; c < range.first + range.count; ++c) {
      const std::string bytes = "chunk " + std::to_string(c);
      batch.digests.push_back(HashChunk(kind, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
      if (weak) batch.weak.push_back(static_cast<uint32_t>(c * 2654435761u));
    }
    if (index + 1 == rule_.count()) {
      batch.closing.emplace();
      batch.closing->chunk_list_digest[0] = 7;
      batch.closing->payload_sha256[31] = 9;
    }
    SignDigestBatch(*key_, plan_, batch);
    return batch;
  }
  Status Verify(const DigestBatch& batch, bool weak = false) {
    return VerifyDigestBatch(key_->public_key(), plan_, rule_, weak, batch);
  }

  std::optional<SigningKey> key_;
  PlanId plan_ = PlanId::Random();
  DigestBatches rule_{256 * kKiB, 500};
};

TEST_F(SignedBatchTest, ASignatureVerifiesOnlyForItsKeyAndMessage) {
  const std::string message = "the source's words";
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(message.data()), message.size());
  const Signature signature = key_->Sign(bytes);
  EXPECT_TRUE(VerifySignature(key_->public_key(), bytes, signature));
  EXPECT_FALSE(VerifySignature(key_->public_key(), bytes.first(bytes.size() - 1), signature));
  Signature flipped = signature;
  flipped[10] ^= 1;
  EXPECT_FALSE(VerifySignature(key_->public_key(), bytes, flipped));
  Result<SigningKey> other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->public_key(), key_->public_key());
  EXPECT_FALSE(VerifySignature(other->public_key(), bytes, signature));
  // The key as a plan carries it: 32 bytes, nothing else.
  const std::string wire(reinterpret_cast<const char*>(key_->public_key().data()), key_->public_key().size());
  Result<PublicKey> parsed = PublicKeyFromBytes(wire);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, key_->public_key());
  EXPECT_EQ(PublicKeyFromBytes(wire.substr(1)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(PublicKeyFromBytes(wire + "x").ok());
  // A copy signs as the original does.
  const SigningKey copy = *key_;
  EXPECT_TRUE(VerifySignature(key_->public_key(), bytes, copy.Sign(bytes)));
}

TEST_F(SignedBatchTest, ABatchRoundTripsAndVerifies) {
  for (ChunkDigest kind : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    for (bool weak : {false, true}) {
      const DigestBatch batch = Batch(5, kind, weak);
      const std::string encoded = EncodeDigestBatch(batch);
      EXPECT_LE(encoded.size(), MaxEncodedDigestBatchBytes());
      Result<DigestBatch> decoded = DecodeDigestBatch(encoded, kind);
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      EXPECT_EQ(decoded->index, 5u);
      EXPECT_EQ(decoded->first_chunk, batch.first_chunk);
      EXPECT_EQ(decoded->digests, batch.digests);
      EXPECT_EQ(decoded->weak, batch.weak);
      EXPECT_TRUE(Verify(*decoded, weak).ok()) << Verify(*decoded, weak).ToString();
      EXPECT_FALSE(Verify(*decoded, !weak).ok());
    }
  }
}

TEST_F(SignedBatchTest, AnythingChangedIsRefused) {
  const DigestBatch good = Batch(4);
  ASSERT_TRUE(Verify(good).ok());
  DigestBatch digest = good;
  digest.digests[3][0] ^= 1;
  EXPECT_EQ(Verify(digest).code(), StatusCode::kDataLoss);
  DigestBatch index = Batch(5);
  index.index = 6;  // moved to the next batch's place: its first chunk no longer fits
  EXPECT_EQ(Verify(index).code(), StatusCode::kDataLoss);
  DigestBatch place = good;
  place.first_chunk += 1;
  EXPECT_EQ(Verify(place).code(), StatusCode::kDataLoss);
  DigestBatch shorter = good;
  shorter.digests.pop_back();
  EXPECT_EQ(Verify(shorter).code(), StatusCode::kDataLoss);
  // The same batch replayed into another plan.
  EXPECT_EQ(VerifyDigestBatch(key_->public_key(), PlanId::Random(), rule_, false, good).code(), StatusCode::kDataLoss);
  // Signed by another key (a member that made its own).
  Result<SigningKey> other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  DigestBatch forged = good;
  SignDigestBatch(*other, plan_, forged);
  EXPECT_EQ(Verify(forged).code(), StatusCode::kDataLoss);
  DigestBatch past = good;
  past.index = rule_.count();
  EXPECT_EQ(Verify(past).code(), StatusCode::kDataLoss);
}

TEST_F(SignedBatchTest, MalformedBytesAreRefusedSayingWhy) {
  const std::string encoded = EncodeDigestBatch(Batch(2));
  EXPECT_FALSE(DecodeDigestBatch(encoded.substr(0, 10), ChunkDigest::kSha256).ok());
  EXPECT_FALSE(DecodeDigestBatch(encoded.substr(0, encoded.size() - 1), ChunkDigest::kSha256).ok());
  EXPECT_FALSE(DecodeDigestBatch(encoded + "x", ChunkDigest::kSha256).ok());
  Result<DigestBatch> other_kind = DecodeDigestBatch(encoded, ChunkDigest::kXxh3);
  ASSERT_FALSE(other_kind.ok());
  EXPECT_NE(other_kind.status().message().find("xxh3"), std::string::npos) << other_kind.status().message();
  std::string zero = encoded;
  for (int i = 16; i < 20; ++i) zero[i] = 0;  // a count of 0
  EXPECT_FALSE(DecodeDigestBatch(zero, ChunkDigest::kSha256).ok());
  std::string huge = encoded;
  huge[16] = '\x7f';  // a count past the most
  EXPECT_FALSE(DecodeDigestBatch(huge, ChunkDigest::kSha256).ok());
  std::string flags = encoded;
  flags[21] = 4;
  EXPECT_FALSE(DecodeDigestBatch(flags, ChunkDigest::kSha256).ok());
}

TEST_F(SignedBatchTest, TheLastBatchAndOnlyItClosesTheList) {
  const uint64_t last = rule_.count() - 1;
  for (ChunkDigest kind : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    const DigestBatch batch = Batch(last, kind, true);
    const std::string encoded = EncodeDigestBatch(batch);
    EXPECT_LE(encoded.size(), MaxEncodedDigestBatchBytes());
    Result<DigestBatch> decoded = DecodeDigestBatch(encoded, kind);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    ASSERT_TRUE(decoded->closing.has_value());
    EXPECT_EQ(*decoded->closing, *batch.closing);
    EXPECT_TRUE(Verify(*decoded, true).ok()) << Verify(*decoded, true).ToString();
    EXPECT_FALSE(DecodeDigestBatch(encoded.substr(0, encoded.size() - 1), kind).ok());
  }
  DigestBatch changed = Batch(last);
  changed.closing->payload_sha256[0] ^= 1;  // after signing
  EXPECT_EQ(Verify(changed).code(), StatusCode::kDataLoss);
  DigestBatch unclosed = Batch(last);
  unclosed.closing.reset();
  SignDigestBatch(*key_, plan_, unclosed);
  EXPECT_EQ(Verify(unclosed).code(), StatusCode::kDataLoss);
  DigestBatch early = Batch(2);
  early.closing.emplace();
  SignDigestBatch(*key_, plan_, early);
  EXPECT_EQ(Verify(early).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace gridcast
