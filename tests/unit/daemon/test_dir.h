// A directory of the running test's own: parallel test processes and tests never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace gridcast {

// TMPDIR/PREFIX-PID-TEST, removed first if an earlier run left it. The caller removes it.
inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace gridcast
