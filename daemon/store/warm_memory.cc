#include "daemon/store/warm_memory.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "common/file_io.h"

namespace gridcast {

Result<std::unique_ptr<WarmMemory>> WarmMemory::Open(const std::string& dir, uint64_t limit_bytes,
                                                     std::chrono::seconds idle) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Status::Internal("cannot make " + dir + ": " + ec.message());
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open " + dir, errno);
  return std::unique_ptr<WarmMemory>(new WarmMemory(fd, limit_bytes, idle));
}

WarmMemory::~WarmMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  while (!spares_.empty()) Drop(spares_.size() - 1);
  close(dir_fd_);
}

bool WarmMemory::Keep(int dir_fd, const std::string& name) {
  if (limit_bytes_ == 0) return false;
  struct stat st {};
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  const uint64_t held = static_cast<uint64_t>(st.st_blocks) * 512;
  // Another link would keep the bytes readable under another name while they are overwritten.
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || held == 0 || held > limit_bytes_) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string file = std::to_string(next_file_++);
  if (renameat(dir_fd, name.c_str(), dir_fd_, file.c_str()) != 0) return false;
  while (held_bytes_ + held > limit_bytes_) Drop(0);
  spares_.push_back({file, held, Clock::now()});
  held_bytes_ += held;
  return true;
}

bool WarmMemory::Take(int dir_fd, const std::string& name, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The most pages that will all be used; else the fewest that cover the payload (a larger
  // spare's rest is freed when the receiver sizes the file).
  auto better = [bytes](const Spare& a, const Spare& b) {
    const bool a_fits = a.held_bytes <= bytes;
    const bool b_fits = b.held_bytes <= bytes;
    if (a_fits != b_fits) return a_fits;
    return a_fits ? a.held_bytes > b.held_bytes : a.held_bytes < b.held_bytes;
  };
  std::vector<Spare*> order;
  for (Spare& spare : spares_) order.push_back(&spare);
  std::sort(order.begin(), order.end(), [&](const Spare* a, const Spare* b) { return better(*a, *b); });
  for (Spare* spare : order) {
    const int fd = openat(dir_fd_, spare->file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    // A write lease is granted only to the one open description of a file no mapping holds:
    // nobody reads the removed payload any more (a member still forwarding it, a process
    // still copying it out). Held across the rename, it keeps anyone from opening it meanwhile.
    if (fcntl(fd, F_SETLEASE, F_WRLCK) != 0) {
      close(fd);
      continue;
    }
    const bool moved = renameat2(dir_fd_, spare->file.c_str(), dir_fd, name.c_str(), RENAME_NOREPLACE) == 0;
    fcntl(fd, F_SETLEASE, F_UNLCK);
    close(fd);
    if (!moved) return false;  // the place is taken (or on another file system): the spare stays
    held_bytes_ -= spare->held_bytes;
    spares_.erase(spares_.begin() + (spare - spares_.data()));
    return true;
  }
  return false;
}

void WarmMemory::ReleaseIdle(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (!spares_.empty() && now - spares_.front().kept_at > idle_) Drop(0);
}

void WarmMemory::Drop(size_t i) {
  unlinkat(dir_fd_, spares_[i].file.c_str(), 0);
  held_bytes_ -= spares_[i].held_bytes;
  spares_.erase(spares_.begin() + static_cast<std::ptrdiff_t>(i));
}

uint64_t WarmMemory::held_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_bytes_;
}

size_t WarmMemory::spares() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spares_.size();
}

}  // namespace gridcast
