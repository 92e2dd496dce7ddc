// The data plane's frame header codec: what it accepts and what it refuses.
#include "daemon/transport/frame.h"

#include <gtest/gtest.h>

#include "common/hex.h"

namespace gridcast {
namespace {

FrameHeader Header(FrameType type, uint32_t length, uint64_t chunk = 7,
                   ChunkDigest digest = ChunkDigest::kSha256) {
  FrameHeader h;
  h.type = type;
  h.plan_id = *PlanId::FromBytes(std::string(PlanId::kBytes, '\xab'));
  h.lane = 3;
  h.length = length;
  h.chunk = chunk;
  if (type == FrameType::kData) {
    h.digest = digest;
    h.hash = HashChunk(digest, AsBytes("the chunk"));
  }
  return h;
}

TEST(FrameTest, EveryTypeRoundTripsWithEitherDigest) {
  for (ChunkDigest digest : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    for (FrameType type : {FrameType::kData, FrameType::kAck, FrameType::kNack, FrameType::kKeepalive, FrameType::kAssign,
                           FrameType::kDigests, FrameType::kHeld}) {
      const bool held = type == FrameType::kHeld;
      const uint32_t length = type == FrameType::kData ? 4096 : type == FrameType::kDigests ? 1000 : held ? 100 : 0;
      const FrameHeader in = Header(type, length, held ? 1024 : kKeepaliveParentRepairs, digest);
      const auto bytes = EncodeFrameHeader(in);
      Result<FrameHeader> out = DecodeFrameHeader(bytes, 1 << 20);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(out->type, in.type);
      EXPECT_EQ(out->digest, in.digest);
      EXPECT_EQ(out->plan_id, in.plan_id);
      EXPECT_EQ(out->lane, in.lane);
      EXPECT_EQ(out->length, in.length);
      EXPECT_EQ(out->chunk, in.chunk);
      EXPECT_EQ(out->hash, in.hash);
    }
  }
}

// A member of data protocol version 1 to 5 is refused at the challenge, by version and clearly.
TEST(FrameTest, AnotherProtocolVersionIsRefusedByName) {
  for (uint32_t version : {1u, 2u, 3u, 4u, 5u, 6u}) {
    Challenge old;
    old.version = version;
    Result<Challenge> decoded = DecodeChallenge(EncodeChallenge(old));
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(decoded.status().message().find("version " + std::to_string(version) + ", this daemon version 7"),
              std::string::npos)
        << decoded.status().message();
  }
  EXPECT_TRUE(DecodeChallenge(EncodeChallenge(Challenge{})).ok());
  // And its frames ("GCF1") are not read as this version's.
  auto v1_frame = EncodeFrameHeader(Header(FrameType::kData, 4096));
  v1_frame[3] = '1';
  EXPECT_FALSE(DecodeFrameHeader(v1_frame, 1 << 20).ok());
}

TEST(FrameTest, RefusesWhatAHeaderAloneShowsToBeWrong) {
  auto refused = [](std::array<uint8_t, kFrameHeaderBytes> bytes, uint32_t max_length, const std::string& why) {
    Result<FrameHeader> out = DecodeFrameHeader(bytes, max_length);
    ASSERT_FALSE(out.ok()) << why;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << why;
  };
  const auto data = EncodeFrameHeader(Header(FrameType::kData, 4096));
  refused(data, 4095, "data longer than the chunk size");
  auto bad_magic = data;
  bad_magic[0] = 'X';
  refused(bad_magic, 1 << 20, "bad magic");
  for (uint8_t type : {0, 7, 255}) {
    auto unknown = data;
    unknown[4] = type;
    refused(unknown, 1 << 20, "unknown type " + std::to_string(type));
  }
  auto reserved = data;
  reserved[6] = 1;
  refused(reserved, 1 << 20, "reserved bytes");
  for (uint8_t digest : {0, 3, 255}) {
    auto unknown = data;
    unknown[5] = digest;
    refused(unknown, 1 << 20, "unknown digest " + std::to_string(digest));
  }
  auto long_hash = EncodeFrameHeader(Header(FrameType::kData, 4096, 7, ChunkDigest::kXxh3));
  long_hash[kFrameHeaderBytes - 1] = 1;  // past XXH3-128's 16 bytes
  refused(long_hash, 1 << 20, "a hash longer than its digest");
  for (FrameType type : {FrameType::kAck, FrameType::kNack, FrameType::kKeepalive, FrameType::kAssign}) {
    refused(EncodeFrameHeader(Header(type, 1)), 1 << 20, "a payload on a control frame");
    auto with_digest = EncodeFrameHeader(Header(type, 0));
    with_digest[5] = 1;
    refused(with_digest, 1 << 20, "a digest on a control frame");
  }
  // A DIGESTS frame: a body of one batch at most, never empty, and no hash in the header.
  refused(EncodeFrameHeader(Header(FrameType::kDigests, 0)), 1 << 20, "an empty batch");
  refused(EncodeFrameHeader(Header(FrameType::kDigests, static_cast<uint32_t>(MaxEncodedDigestBatchBytes()) + 1)),
          1 << 20, "a body longer than any batch");
  EXPECT_TRUE(DecodeFrameHeader(EncodeFrameHeader(Header(FrameType::kDigests,
                                                         static_cast<uint32_t>(MaxEncodedDigestBatchBytes()))),
                                1)
                  .ok())
      << "a batch's length is bounded by the batch, not by the chunk size";
  auto batch_with_hash = EncodeFrameHeader(Header(FrameType::kDigests, 100));
  batch_with_hash[kFrameHeaderBytes - 1] = 1;
  refused(batch_with_hash, 1 << 20, "a hash on a DIGESTS frame");
  // A HELD frame: 1 to kMaxHeldBytes of bits (a batch's), no hash.
  refused(EncodeFrameHeader(Header(FrameType::kHeld, 0, 8)), 1 << 20, "no bits");
  refused(EncodeFrameHeader(Header(FrameType::kHeld, kMaxHeldBytes + 1, 8)), 1 << 20, "more bits than a batch has");
  EXPECT_TRUE(DecodeFrameHeader(EncodeFrameHeader(Header(FrameType::kHeld, kMaxHeldBytes, 13)), 1).ok());
  auto held_with_hash = EncodeFrameHeader(Header(FrameType::kHeld, 1, 8));
  held_with_hash[kFrameHeaderBytes - 1] = 1;
  refused(held_with_hash, 1 << 20, "a hash on a HELD frame");
}

TEST(FrameTest, HeldRunsRoundTripAndBadOnesAreRefused) {
  const std::vector<ChunkRun> runs = {{0, 2}, {3, 4}, {10, 1u << 30}};
  const std::vector<uint8_t> bytes = EncodeHeldRuns(runs);
  EXPECT_EQ(bytes.size(), runs.size() * kHeldRunBytes);
  Result<std::vector<ChunkRun>> decoded = DecodeHeldRuns(bytes, 1u << 30);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, runs);
  EXPECT_TRUE(DecodeHeldRuns({}, 0).ok());
  const auto refused = [](const std::vector<ChunkRun>& bad, uint64_t chunks) {
    return DecodeHeldRuns(EncodeHeldRuns(bad), chunks).status().code() == StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused({{0, 5}}, 4));            // past the plan
  EXPECT_TRUE(refused({{2, 2}}, 4));            // empty
  EXPECT_TRUE(refused({{2, 4}, {0, 1}}, 8));    // out of order
  EXPECT_TRUE(refused({{0, 2}, {2, 4}}, 8));    // touching: one run
  EXPECT_TRUE(refused({{0, 3}, {2, 4}}, 8));    // overlapping
  std::vector<uint8_t> torn = bytes;
  torn.pop_back();
  EXPECT_FALSE(DecodeHeldRuns(torn, 1u << 30).ok());
  const std::vector<uint8_t> too_many((kMaxAcceptHeldRuns + 1) * kHeldRunBytes, 0);
  EXPECT_FALSE(DecodeHeldRuns(too_many, 1u << 30).ok());
}

}  // namespace
}  // namespace gridcast
