// What was built: the project's version, the commit (with "-dirty" when the tree had changes;
// "unknown" outside a git checkout) and the CMake build type, e.g. "0.1.0 (commit
// 36fed26ab0c1, RelWithDebInfo)". For --version; generated at every build
// (cmake/build_info.cmake), so it names the commit built, not the one configured.
#pragma once

#include <string_view>

namespace gridcast {

std::string_view BuildVersion();
// Its parts, e.g. for the metrics' gridcast_build_info series.
std::string_view BuildVersionNumber();
std::string_view BuildCommit();
std::string_view BuildType();

}  // namespace gridcast
