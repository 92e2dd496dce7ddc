#include "daemon/store/probe_payload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gridcast {
namespace {

namespace fs = std::filesystem;

class ProbePayloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gridcast-probe-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string data() const { return (dir_ / "data").string(); }

  fs::path dir_;
};

TEST_F(ProbePayloadTest, WritesFreshBytesEachTimeAndLeavesNoTemporaryFile) {
  Result<std::string> first = WriteProbePayload(data(), "probes/p.bin", 100003);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, (dir_ / "data" / "probes" / "p.bin").string());
  const std::string a = Read(*first);
  ASSERT_EQ(a.size(), 100003u);
  Result<std::string> second = WriteProbePayload(data(), "probes/p.bin", 100003);
  ASSERT_TRUE(second.ok());
  const std::string b = Read(*second);
  EXPECT_EQ(b.size(), a.size());
  EXPECT_NE(a, b);  // a new seed every call
  EXPECT_NE(a.find_first_not_of('\0'), std::string::npos);
  for (const auto& entry : fs::directory_iterator(dir_ / "data" / "probes")) {
    EXPECT_EQ(entry.path().filename(), "p.bin");
  }
}

TEST_F(ProbePayloadTest, ReplacesASymlinkWithoutFollowingIt) {
  const fs::path outside = dir_ / "outside.txt";
  std::ofstream(outside) << "keep";
  fs::create_symlink(outside, dir_ / "data" / "p.bin");
  ASSERT_TRUE(WriteProbePayload(data(), "p.bin", 4096).ok());
  EXPECT_EQ(Read(outside), "keep");
  EXPECT_FALSE(fs::is_symlink(dir_ / "data" / "p.bin"));
  EXPECT_EQ(fs::file_size(dir_ / "data" / "p.bin"), 4096u);
}

TEST_F(ProbePayloadTest, RefusesEscapesSymlinkedDirectoriesAndBadSizes) {
  fs::create_directories(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "data" / "link");
  for (const char* name : {"../p.bin", "/tmp/p.bin", "link/p.bin", ".gridcast-x", ""}) {
    Result<std::string> r = WriteProbePayload(data(), name, 16);
    EXPECT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name << ": " << r.status().message();
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "elsewhere"));
  EXPECT_EQ(WriteProbePayload(data(), "p.bin", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteProbePayload(data(), "p.bin", kMaxProbeBytes + 1).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
