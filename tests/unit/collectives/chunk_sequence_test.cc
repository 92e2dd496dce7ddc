#include "collectives/chunk_sequence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/splitmix64.h"

namespace gridcast {
namespace {

// What the sequences stand for, spelled out: every range expanded, ranges sorted by begin.
std::vector<uint64_t> Expanded(std::vector<ChunkRange> ranges) {
  std::stable_sort(ranges.begin(), ranges.end(), [](const ChunkRange& a, const ChunkRange& b) { return a.begin < b.begin; });
  std::vector<uint64_t> chunks;
  for (const ChunkRange& r : ranges) {
    for (uint64_t c = r.begin; c < r.end; c += r.step) chunks.push_back(c);
  }
  return chunks;
}

void ExpectSameAsExpanded(const std::vector<ChunkRange>& ranges, uint64_t chunks_to_ask) {
  const std::vector<uint64_t> expected = Expanded(ranges);
  const ChunkSequence sequence(ranges);
  ASSERT_EQ(sequence.size(), expected.size());
  std::map<uint64_t, uint64_t> position_of;
  for (uint64_t p = 0; p < expected.size(); ++p) {
    EXPECT_EQ(sequence[p], expected[p]) << p;
    position_of.emplace(expected[p], p);
  }
  for (uint64_t c = 0; c < chunks_to_ask; ++c) {
    const auto found = position_of.find(c);
    const std::optional<uint64_t> position = sequence.PositionOf(c);
    if (found == position_of.end()) {
      EXPECT_FALSE(position.has_value()) << c;
    } else {
      ASSERT_TRUE(position.has_value()) << c;
      EXPECT_EQ(*position, found->second) << c;
    }
  }
}

TEST(ChunkSequence, OneContiguousRange) { ExpectSameAsExpanded({{3, 11, 1}}, 20); }

TEST(ChunkSequence, ModStripes) {
  for (uint64_t lanes : {1, 2, 3, 7}) {
    for (uint64_t lane = 0; lane < lanes; ++lane) ExpectSameAsExpanded({{lane, 50, lanes}}, 60);
  }
}

TEST(ChunkSequence, SeveralRangesListedOutOfOrder) {
  ExpectSameAsExpanded({{40, 50, 1}, {0, 10, 3}, {20, 21, 1}, {11, 19, 2}}, 60);
}

TEST(ChunkSequence, InterleavedRangesFollowOneAnother) {
  const ChunkSequence sequence({{1, 9, 2}, {0, 9, 2}});
  EXPECT_EQ(sequence[0], 0u);
  EXPECT_EQ(sequence[4], 8u);
  EXPECT_EQ(sequence[5], 1u);
  EXPECT_EQ(sequence.PositionOf(7), 8u);
  ExpectSameAsExpanded({{1, 9, 2}, {0, 9, 2}, {20, 30, 5}}, 40);
}

TEST(ChunkSequence, EmptyRangesAndEmpty) {
  ExpectSameAsExpanded({{5, 5, 1}, {7, 3, 1}, {2, 4, 1}}, 10);
  const ChunkSequence none;
  EXPECT_EQ(none.size(), 0u);
  EXPECT_FALSE(none.PositionOf(0).has_value());
}

TEST(ChunkSequence, AtTwoToTheThirty) {
  const uint64_t n = uint64_t{1} << 30;
  const ChunkSequence sequence({{3, n, 4}});
  EXPECT_EQ(sequence.size(), n / 4);
  EXPECT_EQ(sequence[sequence.size() - 1], n - 1);
  EXPECT_EQ(sequence.PositionOf(n - 1), n / 4 - 1);
  EXPECT_FALSE(sequence.PositionOf(n - 2).has_value());
}

// Random partitions of chunks into owners, as plans' lanes: mod stripes, blocks and mixtures.
TEST(ChunkOwners, AgreesWithExpansionOnRandomPartitions) {
  SplitMix64 random(52);
  for (int trial = 0; trial < 300; ++trial) {
    const uint64_t chunks = 1 + random.Next() % 200;
    const int owners = 1 + static_cast<int>(random.Next() % 6);
    std::vector<std::vector<ChunkRange>> ranges(static_cast<size_t>(owners));
    std::vector<int> expected(chunks, -1);
    // Cut [0, chunks) into blocks; each block goes to one owner whole, or to all owners by
    // stride, or stays unowned.
    for (uint64_t begin = 0; begin < chunks;) {
      const uint64_t end = std::min(chunks, begin + 1 + random.Next() % 40);
      const uint64_t how = random.Next() % 3;
      if (how == 0) {
        const int owner = static_cast<int>(random.Next() % owners);
        ranges[owner].push_back({begin, end, 1});
        for (uint64_t c = begin; c < end; ++c) expected[c] = owner;
      } else if (how == 1) {
        for (int o = 0; o < owners; ++o) {
          ranges[o].push_back({begin + static_cast<uint64_t>(o), end, static_cast<uint64_t>(owners)});
          for (uint64_t c = begin + static_cast<uint64_t>(o); c < end; c += static_cast<uint64_t>(owners)) expected[c] = o;
        }
      }
      begin = end;
    }
    const ChunkOwners index(ranges);
    for (uint64_t c = 0; c < chunks + 3; ++c) {
      EXPECT_EQ(index.OwnerOf(c), c < chunks ? expected[c] : -1) << "trial " << trial << " chunk " << c;
    }
    for (const std::vector<ChunkRange>& owned : ranges) ExpectSameAsExpanded(owned, chunks + 3);
  }
}

TEST(ChunkOwners, FourThousandStripes) {
  const uint64_t n = uint64_t{1} << 30, lanes = 4096;
  std::vector<std::vector<ChunkRange>> ranges;
  for (uint64_t l = 0; l < lanes; ++l) ranges.push_back({{l, n, lanes}});
  const ChunkOwners index(ranges);
  for (uint64_t c : {uint64_t{0}, uint64_t{4095}, uint64_t{4096}, n - 1, n / 3}) {
    EXPECT_EQ(index.OwnerOf(c), static_cast<int>(c % lanes)) << c;
  }
  EXPECT_EQ(index.OwnerOf(n), -1);
}

}  // namespace
}  // namespace gridcast
