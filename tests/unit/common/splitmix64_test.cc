#include "common/splitmix64.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace gridcast {
namespace {

TEST(FillPseudoRandomTest, WritesTheGeneratorsWordsAndCutsTheLastOne) {
  SplitMix64 reference(42);
  const uint64_t first = reference.Next();
  const uint64_t second = reference.Next();
  std::vector<uint8_t> bytes(13, 0);
  SplitMix64 generator(42);
  FillPseudoRandom(bytes, generator);
  EXPECT_EQ(std::memcmp(bytes.data(), &first, 8), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + 8, &second, 5), 0);
  EXPECT_EQ(generator.Next(), reference.Next());  // two steps taken, no more
}

TEST(FillPseudoRandomTest, SeedsGiveDifferentBytesAndEmptySpansAreFine) {
  std::vector<uint8_t> a(64), b(64);
  SplitMix64 ga(1), gb(2);
  FillPseudoRandom(a, ga);
  FillPseudoRandom(b, gb);
  EXPECT_NE(a, b);
  SplitMix64 untouched(1);
  FillPseudoRandom({}, untouched);
  EXPECT_EQ(untouched.Next(), SplitMix64(1).Next());
}

}  // namespace
}  // namespace gridcast
