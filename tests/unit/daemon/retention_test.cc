// Retention: what goes by age and by bytes, oldest first, and what a store holds as top-level
// names (files, directories whole, partial copies kept).
#include "daemon/store/retention.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gridcast {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;
using Clock = std::chrono::system_clock;

TEST(RetentionTest, PastTheAgeThenOldestFirstUntilTheRestFit) {
  const Clock::time_point now = Clock::now();
  const std::vector<HeldEntry> held = {{"new", 100, now - hours(1)},
                                       {"old", 100, now - hours(50)},
                                       {"middle", 300, now - hours(10)},
                                       {"older", 100, now - hours(30)}};
  RetentionPolicy none;
  EXPECT_TRUE(ChooseForRemoval(held, now, none).empty());

  RetentionPolicy by_age;
  by_age.max_age = std::chrono::seconds(hours(24));
  EXPECT_EQ(ChooseForRemoval(held, now, by_age), (std::vector<std::string>{"old", "older"}));

  RetentionPolicy by_bytes;
  by_bytes.max_bytes = 400;  // 600 held: "old" and "older" go, 400 stay
  EXPECT_EQ(ChooseForRemoval(held, now, by_bytes), (std::vector<std::string>{"old", "older"}));
  by_bytes.max_bytes = 399;  // then "middle" too, though "new" alone would be enough: oldest first
  EXPECT_EQ(ChooseForRemoval(held, now, by_bytes), (std::vector<std::string>{"old", "older", "middle"}));
  by_bytes.max_bytes = 600;
  EXPECT_TRUE(ChooseForRemoval(held, now, by_bytes).empty());

  RetentionPolicy both = by_age;
  both.max_bytes = 50;
  EXPECT_EQ(ChooseForRemoval(held, now, both), (std::vector<std::string>{"old", "older", "middle", "new"}));
}

class StoreDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("retention-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, size_t bytes) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << std::string(bytes, 'x');
  }
  fs::path dir_;
};

TEST_F(StoreDir, TopLevelNamesWholeAndPartialCopiesKept) {
  Write("a.bin", 10);
  Write("set/x", 5);
  Write("set/deeper/y", 7);
  Write("busy/done", 3);
  Write("busy/coming.part", 1);
  Write("b.bin.part", 4);
  Write(".gridcast/state/s", 9);
  fs::create_symlink("a.bin", dir_ / "link");
  const Clock::time_point before = Clock::now() - hours(1);

  std::vector<HeldEntry> held = ScanStore(dir_.string());
  std::sort(held.begin(), held.end(), [](const HeldEntry& a, const HeldEntry& b) { return a.name < b.name; });
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].name, "a.bin");
  EXPECT_EQ(held[0].bytes, 10u);
  EXPECT_EQ(held[1].name, "set");
  EXPECT_EQ(held[1].bytes, 12u);
  EXPECT_GT(held[1].arrived, before);
  EXPECT_TRUE(ScanStore((dir_ / "missing").string()).empty());
}

}  // namespace
}  // namespace gridcast
