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

TEST(Spelling, AnUnknownOptionIsNamedWithTheNearestKnownOne) {
  const std::vector<std::string> known = {"--window", "--io-timeout", "--config", "--help"};
  EXPECT_EQ(UnknownOption({"--windw", "3"}, known), "unknown option '--windw' (did you mean '--window'?)");
  EXPECT_EQ(UnknownOption({"--config=x.yaml", "--io-timout=5"}, known),
            "unknown option '--io-timout' (did you mean '--io-timeout'?)");
  EXPECT_EQ(UnknownOption({"--zebra"}, known), "unknown option '--zebra'");
  EXPECT_EQ(UnknownOption({"--window", "3", "-x", "file"}, known), "");  // short options are not guessed at
  EXPECT_EQ(UnknownOption({"--", "--windw"}, known), "");                 // after "--", arguments
}

}  // namespace
}  // namespace gridcast
