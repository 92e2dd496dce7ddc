#include "common/chunk_bits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace gridcast {
namespace {

// Against a vector<bool> doing the same: random sets, clears, finds and byte ORs, in memory and
// in a spill file, from both uniform starts.
void CheckAgainstVector(uint64_t count, bool start, const std::string& spill_dir, uint64_t in_memory_bits,
                        uint32_t seed) {
  ChunkBits bits(count, start, spill_dir, in_memory_bits);
  std::vector<bool> expected(count, start);
  std::mt19937_64 random(seed);
  for (int step = 0; step < 2000; ++step) {
    const uint64_t i = random() % count;
    switch (random() % 4) {
      case 0:
      case 1: {
        const bool value = random() % 2 == 0;
        bits.Set(i, value);
        expected[i] = value;
        break;
      }
      case 2: {
        const uint64_t first = (i / 8) * 8;
        std::vector<uint8_t> bytes(1 + random() % 5);
        for (uint8_t& b : bytes) b = static_cast<uint8_t>(random() % 4 == 0 ? random() : 0);
        bits.OrBytes(first, bytes);
        for (size_t k = 0; k < bytes.size(); ++k) {
          for (int b = 0; b < 8; ++b) {
            if (first + 8 * k + b < count && ((bytes[k] >> b) & 1)) expected[first + 8 * k + b] = true;
          }
        }
        break;
      }
      default: {
        const bool value = random() % 2 == 0;
        uint64_t want = i;
        while (want < count && expected[want] != value) ++want;
        ASSERT_EQ(bits.Find(value, i), want) << "step " << step << " from " << i << " value " << value;
      }
    }
  }
  for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(bits[i], expected[i]) << i;
  EXPECT_EQ(bits.Find(true, count), count);
  EXPECT_EQ(bits.Find(false, count + 5), count);
}

class ChunkBitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("chunk_bits_test." + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ChunkBitsTest, MatchesAVectorOfBoolInMemoryAndInAFile) {
  for (const uint64_t count : {1ull, 7ull, 63ull, 64ull, 65ull, 1000ull, 4099ull}) {
    for (const bool start : {false, true}) {
      CheckAgainstVector(count, start, "", ChunkBits::kInMemoryBits, static_cast<uint32_t>(count));
      CheckAgainstVector(count, start, dir_.string(), 0, static_cast<uint32_t>(count) + 1);
    }
  }
}

TEST_F(ChunkBitsTest, UniformBitsTakeNoStorageUntilOneDiffers) {
  ChunkBits all(uint64_t{1} << 30, true, dir_.string(), 0);
  EXPECT_TRUE(all[12345]);
  all.Set(12345, true);
  EXPECT_FALSE(all.mapped());
  EXPECT_EQ(all.Find(true, 99), 99u);
  EXPECT_EQ(all.Find(false, 0), all.size());
  all.OrBytes(0, std::vector<uint8_t>{0xff});
  EXPECT_FALSE(all.mapped());
}

TEST_F(ChunkBitsTest, PastTheLimitTheBitsLiveInAnUnlinkedFileOfTheSpillDirectory) {
  const uint64_t count = uint64_t{1} << 30;  // 128 MiB of bits
  ChunkBits bits(count, false, dir_.string(), uint64_t{1} << 20);
  bits.Set(count - 1);
  bits.Set(3);
  ASSERT_TRUE(bits.mapped());
  EXPECT_TRUE(std::filesystem::is_empty(dir_));  // nothing left behind, even while mapped
  EXPECT_EQ(bits.Find(true, 0), 3u);
  EXPECT_EQ(bits.Find(true, 4), count - 1);  // 16 million words scanned
  EXPECT_EQ(bits.Find(false, 3), 4u);

  ChunkBits moved = std::move(bits);
  EXPECT_TRUE(moved[count - 1]);
  EXPECT_TRUE(moved.mapped());
  EXPECT_TRUE(bits.empty());
}

TEST_F(ChunkBitsTest, WithoutADirectoryOrBelowTheLimitTheBitsAreMemory) {
  ChunkBits small(1000, false, dir_.string());
  small.Set(5);
  EXPECT_FALSE(small.mapped());
  ChunkBits nowhere(uint64_t{1} << 27, false, "", 0);
  nowhere.Set(5);
  EXPECT_FALSE(nowhere.mapped());
  ChunkBits missing(uint64_t{1} << 20, false, (dir_ / "absent").string(), 0);
  missing.Set(5);
  EXPECT_FALSE(missing.mapped());
  EXPECT_TRUE(missing[5]);
}

}  // namespace
}  // namespace gridcast
