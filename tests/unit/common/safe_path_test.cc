// Confinement: payload names that could lead out of the data directory are refused, and a
// path a request names is read only from the data directory, the memory directory or a send
// root, links resolved first.
#include "common/safe_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gridcast {
namespace {

namespace fs = std::filesystem;

TEST(SafePath, PayloadNamesStayRelativeAndPlain) {
  EXPECT_TRUE(CheckPayloadName("runs/42/input.bin").ok());
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", ".gridcast/state/x"}) {
    EXPECT_FALSE(CheckPayloadName(bad).ok()) << bad;
  }
}

TEST(SafePath, IsWithinComparesWholeComponents) {
  EXPECT_TRUE(IsWithin("/data", "/data"));
  EXPECT_TRUE(IsWithin("/data/a/b", "/data"));
  EXPECT_TRUE(IsWithin("/data/a", "/data/"));
  EXPECT_FALSE(IsWithin("/database", "/data"));
  EXPECT_FALSE(IsWithin("/", "/data"));
  EXPECT_FALSE(IsWithin("/data", ""));  // an unresolvable root confines nothing
}

TEST(SafePath, ASendPathIsReadOnlyFromTheDaemonsDirectoriesAndRoots) {
  const fs::path dir = fs::temp_directory_path() / ("gridcast-safe-path-" + std::to_string(getpid()));
  fs::remove_all(dir);
  for (const char* sub : {"data", "memory", "root", "elsewhere"}) fs::create_directories(dir / sub);
  std::ofstream(dir / "data" / "a.bin") << "a";
  std::ofstream(dir / "elsewhere" / "secret") << "s";
  fs::create_symlink(dir / "elsewhere" / "secret", dir / "data" / "link");
  const std::string data = (dir / "data").string();
  const std::string memory = (dir / "memory").string();
  const std::vector<std::string> roots = {(dir / "root").string()};

  Result<fs::path> relative = ResolveSendPath("a.bin", data, memory, roots);
  ASSERT_TRUE(relative.ok()) << relative.status().ToString();
  EXPECT_EQ(*relative, fs::canonical(dir / "data" / "a.bin"));
  EXPECT_TRUE(ResolveSendPath((dir / "root" / "new.bin").string(), data, memory, roots).ok());
  EXPECT_EQ(*ResolveSendPath("x.bin", data, memory, roots, /*in_memory=*/true), fs::canonical(dir / "memory") / "x.bin");

  for (const std::string& outside : {(dir / "elsewhere" / "secret").string(), std::string("link"), std::string("../elsewhere/secret")}) {
    const Status refused = ResolveSendPath(outside, data, memory, roots).status();
    EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied) << outside;
    EXPECT_NE(refused.message().find("is outside the data directory"), std::string::npos) << refused.message();
  }
  // No memory directory: nothing is in it, and nothing resolves into it.
  EXPECT_EQ(ResolveSendPath("x.bin", data, "", roots, true).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ResolveSendPath((dir / "memory" / "x").string(), data, "", roots).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gridcast
