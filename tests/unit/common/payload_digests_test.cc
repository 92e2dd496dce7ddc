// DigestPayload: the same digests, chunk by chunk and whole, whatever the threads' split, and
// the first read error instead of digests.
#include "common/payload_digests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace gridcast {
namespace {

Result<PayloadDigests> DigestOf(std::span<const uint8_t> bytes, uint64_t chunk_bytes, ChunkDigest digest) {
  return DigestPayload(bytes.size(), chunk_bytes, digest, [bytes](uint64_t offset, uint64_t length, std::vector<uint8_t>&) {
    return Result<std::span<const uint8_t>>(bytes.subspan(offset, length));
  });
}

TEST(PayloadDigestsTest, EveryChunkAndTheWholeAsOneThreadWouldHashThem) {
  std::vector<uint8_t> bytes(10 * 4096 + 17);
  RandomBytes(bytes);
  for (ChunkDigest digest : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    for (uint64_t chunk : {uint64_t{1}, uint64_t{4096}, uint64_t{4097}, uint64_t{1} << 20}) {
      Result<PayloadDigests> digests = DigestOf(bytes, chunk, digest);
      ASSERT_TRUE(digests.ok());
      EXPECT_EQ(digests->sha256, Sha256(bytes));  // the whole payload's is SHA-256 whatever the chunks'
      ASSERT_EQ(digests->chunk_hashes.size(), (bytes.size() + chunk - 1) / chunk);
      for (uint64_t c = 0; c < digests->chunk_hashes.size(); ++c) {
        const uint64_t offset = c * chunk;
        EXPECT_EQ(digests->chunk_hashes[c],
                  HashChunk(digest, std::span<const uint8_t>(bytes).subspan(offset, std::min(chunk, bytes.size() - offset))))
            << "chunk " << c << " of " << chunk;
      }
    }
  }
  Result<PayloadDigests> empty = DigestOf({}, 4096, ChunkDigest::kSha256);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->chunk_hashes.empty());
  EXPECT_EQ(empty->sha256, Sha256({}));
}

TEST(PayloadDigestsTest, APayloadKnownByItsChunkListIsNotHashedWhole) {
  std::vector<uint8_t> bytes(33 * 4096 + 5);
  RandomBytes(bytes);
  const std::span<const uint8_t> view(bytes);
  for (ChunkDigest digest : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    Result<PayloadDigests> whole = DigestOf(bytes, 4096, digest);
    Result<PayloadDigests> listed =
        DigestPayload(bytes.size(), 4096, digest, [view](uint64_t offset, uint64_t length, std::vector<uint8_t>&) {
          return Result<std::span<const uint8_t>>(view.subspan(offset, length));
        }, WholeDigest::kChunkList);
    ASSERT_TRUE(whole.ok() && listed.ok());
    EXPECT_EQ(listed->chunk_hashes, whole->chunk_hashes);
    EXPECT_EQ(listed->sha256, ChunkListDigest(digest, whole->chunk_hashes));
    EXPECT_NE(listed->sha256, whole->sha256);
  }
}

TEST(PayloadDigestsTest, TheVisitorSeesEveryChunkOnceWithItsBytes) {
  std::vector<uint8_t> bytes(37 * 4096 + 5);
  RandomBytes(bytes);
  std::vector<int> visits((bytes.size() + 4095) / 4096);
  std::vector<bool> right(visits.size());
  Result<PayloadDigests> digests = DigestPayload(
      bytes.size(), 4096, ChunkDigest::kXxh3,
      [&bytes](uint64_t offset, uint64_t length, std::vector<uint8_t>& scratch) {
        scratch.assign(bytes.begin() + static_cast<ptrdiff_t>(offset), bytes.begin() + static_cast<ptrdiff_t>(offset + length));
        return Result<std::span<const uint8_t>>(std::span<const uint8_t>(scratch));
      },
      WholeDigest::kSha256,
      [&](uint64_t chunk, std::span<const uint8_t> seen) {
        ++visits[chunk];  // each chunk is one thread's
        const uint64_t offset = chunk * 4096;
        right[chunk] = std::ranges::equal(seen, std::span<const uint8_t>(bytes).subspan(
                                                    offset, std::min<uint64_t>(4096, bytes.size() - offset)));
      });
  ASSERT_TRUE(digests.ok());
  for (size_t c = 0; c < visits.size(); ++c) {
    EXPECT_EQ(visits[c], 1) << c;
    EXPECT_TRUE(right[c]) << c;
  }
}

TEST(PayloadDigestsTest, AReadErrorIsReturnedAndAZeroChunkRefused) {
  const ReadPayloadPiece failing = [](uint64_t offset, uint64_t, std::vector<uint8_t>&) -> Result<std::span<const uint8_t>> {
    return Status::DataLoss("no bytes at " + std::to_string(offset));
  };
  EXPECT_EQ(DigestPayload(1 << 20, 4096, ChunkDigest::kSha256, failing).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DigestPayload(1 << 20, 0, ChunkDigest::kSha256, failing).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
