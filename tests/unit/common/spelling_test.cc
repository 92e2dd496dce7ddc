#include "common/spelling.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

TEST(Spelling, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("window", "window"), 0u);
  EXPECT_EQ(EditDistance("windw", "window"), 1u);
  EXPECT_EQ(EditDistance("windows", "window"), 1u);
  EXPECT_EQ(EditDistance("wimdow", "window"), 1u);
  EXPECT_EQ(EditDistance("sned", "send"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(Spelling, OnlyANearNameIsSuggested) {
  const std::vector<std::string> known = {"send", "list", "status", "netgrid"};
  EXPECT_EQ(NearestName("sned", known), "send");
  EXPECT_EQ(NearestName("lsit", known), "list");
  EXPECT_EQ(NearestName("stauts", known), "status");
  EXPECT_EQ(NearestName("x", known), "");  // one letter is no name
  EXPECT_EQ(NearestName("frobnicate", known), "");
  EXPECT_EQ(DidYouMean("netgird", known), " (did you mean 'netgrid'?)");
  EXPECT_EQ(DidYouMean("zzz", known), "");
}

}  // namespace
}  // namespace gridcast
