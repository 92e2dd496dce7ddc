// Confinement of payload names to the data directory.
//
// A payload name is a relative path ("runs/42/input.bin"). It may not be absolute, contain
// "." or ".." components, empty components or NUL, and no directory on the way may be a
// symlink: every step is opened relative to the previous one with O_NOFOLLOW, so even a
// symlink planted inside the data directory cannot lead out of it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

// InvalidArgument (naming the problem) unless `name` is a safe relative payload name.
Status CheckPayloadName(std::string_view name);

// A directory file descriptor owned by the holder.
class DirFd {
 public:
  explicit DirFd(int fd = -1) : fd_(fd) {}
  DirFd(DirFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirFd& operator=(DirFd&& other) noexcept;
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;
  ~DirFd();
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens the directory that will hold `name` below data_dir (creating missing directories when
// `create`), refusing symlinks. Returns the directory and the final component.
Result<std::pair<DirFd, std::string>> OpenParentDir(const std::string& data_dir,
                                                    std::string_view name, bool create);

// Whether `path` is `root` or below it (lexically: resolve links first). False for an empty root.
bool IsWithin(const std::filesystem::path& path, const std::filesystem::path& root);

// Where a payload or part named `path` by a request is read: relative paths below data_dir
// (below memory_dir with `in_memory`), and every path (after resolving links) inside
// data_dir, memory_dir (when there is one) or a send root. PermissionDenied otherwise.
Result<std::filesystem::path> ResolveSendPath(const std::string& path, const std::string& data_dir,
                                              const std::string& memory_dir,
                                              const std::vector<std::string>& send_roots, bool in_memory = false);

}  // namespace gridcast
