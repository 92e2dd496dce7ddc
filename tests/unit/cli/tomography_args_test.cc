#include "client/cli/tomography_args.h"

#include <gtest/gtest.h>

#include <set>

namespace gridcast::cli {
namespace {

TEST(ParseRunCountTest, AcceptsCountsAndAutoWithACap) {
  Result<RunCount> fixed = ParseRunCount("4", 10, 3);
  ASSERT_TRUE(fixed.ok());
  EXPECT_FALSE(fixed->automatic);
  EXPECT_EQ(fixed->runs, 4);
  Result<RunCount> automatic = ParseRunCount("auto", 7, 3);
  ASSERT_TRUE(automatic.ok());
  EXPECT_TRUE(automatic->automatic);
  EXPECT_EQ(automatic->runs, 7);
}

TEST(ParseRunCountTest, RejectsWhatCannotWorkNamingTheOption) {
  for (const char* bad : {"", "0", "-1", "3x", " 3", "101", "Auto", "99999999999"}) {
    Result<RunCount> r = ParseRunCount(bad, 10, 3);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("--runs: ", 0), 0u) << r.status().message();
  }
  // auto compares the last three partitions: a cap of two could never stop early.
  Result<RunCount> cap = ParseRunCount("auto", 2, 3);
  ASSERT_FALSE(cap.ok());
  EXPECT_EQ(cap.status().message().rfind("--max-runs: ", 0), 0u);
  EXPECT_FALSE(ParseRunCount("auto", 101, 3).ok());
}

TEST(SourcesOfRunsTest, RotatesOverTheMembersOrRepeatsOne) {
  const std::vector<std::string> members = {"a", "b", "c"};
  Result<std::vector<std::string>> rotate = SourcesOfRuns("rotate", members, 5);
  ASSERT_TRUE(rotate.ok());
  EXPECT_EQ(*rotate, (std::vector<std::string>{"a", "c", "b", "a", "c"}));  // stride 2
  // 16 members (two sites of 8 in file order): every member once per 16 runs, sites alternate.
  std::vector<std::string> sixteen;
  for (int i = 0; i < 16; ++i) sixteen.push_back(std::to_string(i));
  Result<std::vector<std::string>> spread = SourcesOfRuns("rotate", sixteen, 16);
  ASSERT_TRUE(spread.ok());
  EXPECT_EQ((std::vector<std::string>(spread->begin(), spread->begin() + 4)),
            (std::vector<std::string>{"0", "9", "2", "11"}));
  EXPECT_EQ(std::set<std::string>(spread->begin(), spread->end()).size(), 16u);
  Result<std::vector<std::string>> pair = SourcesOfRuns("rotate", {"a", "b"}, 3);
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(*pair, (std::vector<std::string>{"a", "b", "a"}));
  Result<std::vector<std::string>> one = SourcesOfRuns("b", members, 2);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (std::vector<std::string>{"b", "b"}));
  Result<std::vector<std::string>> unknown = SourcesOfRuns("z", members, 2);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'z'"), std::string::npos);
  EXPECT_FALSE(SourcesOfRuns("rotate", {}, 1).ok());
}

TEST(TomographyCacheTest, SitsNextToTheClusterFile) {
  EXPECT_EQ(TomographyCachePath("/srv/grid/cluster.yaml"),
            std::filesystem::path("/srv/grid/.gridcast-tomography/topology.yaml"));
}

TEST(FormatAgeTest, PicksAReadableUnit) {
  EXPECT_EQ(FormatAge(-3), "0 s");
  EXPECT_EQ(FormatAge(45), "45 s");
  EXPECT_EQ(FormatAge(12 * 60), "12 min");
  EXPECT_EQ(FormatAge(3.5 * 3600), "3.5 h");
  EXPECT_EQ(FormatAge(3 * 86400), "3.0 days");
}

}  // namespace
}  // namespace gridcast::cli
