// Multi-buffer SHA-256 against OpenSSL's (common/crypto.h Sha256) on random inputs: every
// length around the padding boundaries, mixed lengths in one batch, unaligned and repeated
// pointers, every batch size; and HashChunks against HashChunk one by one.
#include "common/sha256_multibuffer.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/chunk_digest.h"
#include "common/crypto.h"
#include "common/hex.h"

namespace gridcast {
namespace {

std::vector<uint8_t> RandomBytes(std::mt19937_64& rng, size_t size) {
  std::vector<uint8_t> bytes(size);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// Hashes the messages at `data` (lengths `length`) in one call; expects each to be OpenSSL's.
void ExpectOpenSslDigests(const std::vector<const uint8_t*>& data, const std::vector<size_t>& length) {
  std::vector<uint8_t[32]> out(data.size());
  Sha256MultiBuffer(data.data(), length.data(), data.size(), out.data());
  for (size_t i = 0; i < data.size(); ++i) {
    const Digest want = Sha256({data[i], length[i]});
    EXPECT_EQ(ToHex({out[i], 32}), ToHex(want)) << "message " << i << " of " << data.size() << ", "
                                                 << length[i] << " bytes";
  }
}

class Sha256MultiBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Sha256MultiBufferSupported()) GTEST_SKIP() << "no AVX-512 F/BW/VL on this CPU";
  }
  std::mt19937_64 rng_{20261126};
};

TEST_F(Sha256MultiBufferTest, EveryLengthAroundThePaddingBoundariesInFullBatches) {
  // 0-300 covers one and two padding blocks (55/56 and 119/120 bytes) and several full blocks.
  for (size_t n = 0; n <= 300; ++n) {
    std::vector<std::vector<uint8_t>> messages;
    std::vector<const uint8_t*> data;
    for (int lane = 0; lane < 16; ++lane) messages.push_back(RandomBytes(rng_, n));
    for (const auto& m : messages) data.push_back(m.data());
    ExpectOpenSslDigests(data, std::vector<size_t>(16, n));
  }
}

TEST_F(Sha256MultiBufferTest, MixedLengthsUnalignedAndRepeatedPointersAndEveryCount) {
  const std::vector<uint8_t> pool = RandomBytes(rng_, 3 << 20);
  for (size_t count = 0; count <= 40; ++count) {
    std::vector<const uint8_t*> data;
    std::vector<size_t> length;
    for (size_t i = 0; i < count; ++i) {
      // Some large (1 MiB and odd sizes around it), most small; any offset, so any alignment.
      const size_t n = i % 5 == 0 ? (1 << 20) + rng_() % 130 : rng_() % 5000;
      data.push_back(pool.data() + rng_() % (pool.size() - n));
      length.push_back(n);
    }
    if (count >= 2) data[1] = data[0], length[1] = length[0];  // the same message twice
    ExpectOpenSslDigests(data, length);
  }
}

TEST_F(Sha256MultiBufferTest, EmptyMessagesNeedNoBytes) {
  const std::vector<const uint8_t*> data(9, nullptr);
  ExpectOpenSslDigests(data, std::vector<size_t>(9, 0));
}

TEST(HashChunksTest, GivesWhatHashChunkGivesOneByOneForEveryCountAndDigest) {
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint8_t>> chunks;
  for (int i = 0; i < 37; ++i) chunks.push_back(RandomBytes(rng, i == 36 ? 1234 : 65536));
  for (ChunkDigest kind : {ChunkDigest::kSha256, ChunkDigest::kXxh3}) {
    for (size_t count : {0, 1, 6, 7, 8, 15, 16, 17, 22, 23, 37}) {
      std::vector<std::span<const uint8_t>> spans(chunks.begin(), chunks.begin() + count);
      std::vector<Digest> out(count);
      HashChunks(kind, spans, out);
      for (size_t i = 0; i < count; ++i) {
        EXPECT_EQ(out[i], HashChunk(kind, spans[i])) << DigestName(kind) << ", chunk " << i << " of " << count;
      }
    }
  }
}

}  // namespace
}  // namespace gridcast
