// The chunk digests: known answers (so that a member built against another libxxhash or
// OpenSSL agrees), names, and the chunk-hash lists as they travel and are recorded.
#include "common/chunk_digest.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/hex.h"

namespace gridcast {
namespace {

TEST(ChunkDigestTest, KnownAnswersFillOnlyTheDigestsWidth) {
  // SHA-256("abc") (FIPS 180-2) and XXH3-128("abc", seed 0) in canonical (big-endian) form.
  EXPECT_EQ(ToHex(HashChunk(ChunkDigest::kSha256, AsBytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const Digest xxh3 = HashChunk(ChunkDigest::kXxh3, AsBytes("abc"));
  EXPECT_EQ(ToHex(xxh3).substr(0, 32), "06b05ab6733a618578af5f94892f3950");
  EXPECT_EQ(ToHex(xxh3).substr(32), std::string(32, '0'));
  EXPECT_EQ(DigestBytes(ChunkDigest::kSha256), 32u);
  EXPECT_EQ(DigestBytes(ChunkDigest::kXxh3), 16u);
  EXPECT_EQ(DigestAlgorithm(ChunkDigest::kSha256), "SHA-256");
  EXPECT_EQ(DigestAlgorithm(ChunkDigest::kXxh3), "XXH3-128");
  EXPECT_FALSE(HashesFasterThanAHandoff(ChunkDigest::kSha256));
  EXPECT_TRUE(HashesFasterThanAHandoff(ChunkDigest::kXxh3));
}

TEST(ChunkDigestTest, NamesAndValuesRoundTripAndStrangersAreRefused) {
  for (ChunkDigest digest : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    EXPECT_EQ(*ParseChunkDigest(DigestName(digest)), digest);
    EXPECT_EQ(*ChunkDigestFromValue(static_cast<uint32_t>(digest)), digest);
  }
  for (const char* name : {"", "SHA256", "md5", "xxh64", "sha256 "}) {
    Result<ChunkDigest> parsed = ParseChunkDigest(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_NE(parsed.status().message().find("sha256 or xxh3"), std::string::npos);
  }
  for (uint32_t value : {0u, 3u, 256u}) EXPECT_FALSE(ChunkDigestFromValue(value).ok()) << value;
}

TEST(ChunkDigestTest, ListsTravelAtTheDigestsWidthAndAreCheckedOnTheWay) {
  for (ChunkDigest digest : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    std::vector<Digest> hashes;
    for (const char* chunk : {"one", "two", "three"}) hashes.push_back(HashChunk(digest, AsBytes(chunk)));
    const std::string encoded = EncodeChunkHashes(digest, hashes);
    ASSERT_EQ(encoded.size(), 3 * DigestBytes(digest));
    Result<std::vector<Digest>> decoded = DecodeChunkHashes(digest, encoded, 3);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, hashes);
    EXPECT_EQ(DecodeChunkHashes(digest, encoded, 2).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(DecodeChunkHashes(digest, encoded + "x", 3).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(ChunkListDigest(digest, hashes), Sha256(AsBytes(encoded)));
  }
  // A SHA-256 list digest is what it was before the digest was chosen: over 32-byte hashes.
  const std::vector<Digest> sha = {Sha256(AsBytes("a")), Sha256(AsBytes("b"))};
  std::string concatenated;
  for (const Digest& d : sha) concatenated.append(d.begin(), d.end());
  EXPECT_EQ(ChunkListDigest(ChunkDigest::kSha256, sha), Sha256(AsBytes(concatenated)));
  // The same bytes under the two digests give different lists and list digests.
  const std::vector<Digest> as_xxh3 = {HashChunk(ChunkDigest::kXxh3, AsBytes("a"))};
  const std::vector<Digest> as_sha256 = {Sha256(AsBytes("a"))};
  EXPECT_NE(ChunkListDigest(ChunkDigest::kXxh3, as_xxh3), ChunkListDigest(ChunkDigest::kSha256, as_sha256));
}

}  // namespace
}  // namespace gridcast
