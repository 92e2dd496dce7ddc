// A directory of the running test's own: parallel test processes and tests never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace gridcast {

// ROOT/PREFIX-PID-TEST (ROOT: TMPDIR by default), removed first if an earlier run left it. The
// caller removes it.
inline std::filesystem::path FreshTestDir(const std::string& prefix,
                                          const std::filesystem::path& root = std::filesystem::temp_directory_path()) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '-');  // a parameterized test's name
  const std::filesystem::path dir = root / (prefix + "-" + std::to_string(getpid()) + "-" + test);
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace gridcast
