// Confinement of payload names to the data directory.
//
// A payload name is a relative path ("runs/42/input.bin"). It may not be absolute, contain
// "." or ".." components, empty components or NUL, and no directory on the way may be a
// symlink: every step is opened relative to the previous one with O_NOFOLLOW, so even a
// symlink planted inside the data directory cannot lead out of it.
#pragma once

#include <string>
#include <string_view>

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

}  // namespace gridcast
