// PayloadDirectories: where this daemon keeps payloads (the data directory, the in-memory one)
// and which other directories a broadcast or an allgather part may be read from. Every path a
// request names goes through here before a file is opened.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

struct PayloadDirectories {
  std::string data_dir;
  std::string memory_dir;  // a tmpfs directory; empty when this daemon keeps nothing in memory
  std::vector<std::string> send_roots;  // gridcastd --send-root

  const std::string& Of(bool in_memory) const { return in_memory ? memory_dir : data_dir; }

  // Where a payload or part a request names is read from (common/safe_path.h ResolveSendPath):
  // PermissionDenied outside these directories.
  Result<std::filesystem::path> ResolveSend(const std::string& path, bool in_memory = false) const;
};

// A regular file opened for reading (not a symlink at its last step, not a device or FIFO).
Result<int> OpenRegularFile(const std::filesystem::path& path);

}  // namespace gridcast
