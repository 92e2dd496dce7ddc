#include "fault_injection_file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace gridcast {

std::string PathOfDescriptor(int fd) {
  char target[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = readlink(link.c_str(), target, sizeof target);
  return n <= 0 ? std::string() : std::string(target, static_cast<size_t>(n));
}

FaultInjectionFileIo::~FaultInjectionFileIo() {
  for (auto& [id, file] : written_) close(file.fd);
}

void FaultInjectionFileIo::FailWrites(const std::string& path_part, int error, int after) {
  std::lock_guard<std::mutex> lock(mutex_);
  write_rules_.push_back({path_part, error, after});
}

void FaultInjectionFileIo::FailReads(const std::string& path_part, int error, int after) {
  std::lock_guard<std::mutex> lock(mutex_);
  read_rules_.push_back({path_part, error, after});
}

void FaultInjectionFileIo::FailOpens(const std::string& path_part, int error, int after) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_rules_.push_back({path_part, error, after});
}

void FaultInjectionFileIo::FailRenames(const std::string& path_part, int error, int after) {
  std::lock_guard<std::mutex> lock(mutex_);
  rename_rules_.push_back({path_part, error, after});
}

void FaultInjectionFileIo::FailReserve(int error) {
  std::lock_guard<std::mutex> lock(mutex_);
  reserve_error_ = error;
}

void FaultInjectionFileIo::SetShortTransfers(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  short_transfers_ = on;
}

void FaultInjectionFileIo::ClearFaults() {
  std::lock_guard<std::mutex> lock(mutex_);
  write_rules_.clear();
  read_rules_.clear();
  open_rules_.clear();
  rename_rules_.clear();
  reserve_error_ = 0;
  short_transfers_ = false;
}

int FaultInjectionFileIo::failed_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_calls_;
}

int FaultInjectionFileIo::Triggered(std::vector<Rule>& rules, int fd) {
  return rules.empty() ? 0 : TriggeredByPath(rules, PathOfDescriptor(fd));
}

int FaultInjectionFileIo::TriggeredByPath(std::vector<Rule>& rules, const std::string& path) {
  for (Rule& rule : rules) {
    if (path.find(rule.path_part) == std::string::npos) continue;
    if (rule.after > 0) {
      --rule.after;
      continue;
    }
    ++failed_calls_;
    return rule.error;
  }
  return 0;
}

int FaultInjectionFileIo::FailureFor(std::vector<Rule>& rules, int fd) {
  if (const int error = Triggered(rules, fd); error != 0) return error;
  return short_transfers_ && ++calls_ % 3 == 0 ? EINTR : 0;
}

size_t FaultInjectionFileIo::Shorten(size_t bytes) const {
  return short_transfers_ ? std::max<size_t>(1, bytes / 3) : bytes;
}

ssize_t FaultInjectionFileIo::Pread(int fd, void* buffer, size_t bytes, off_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const int error = FailureFor(read_rules_, fd); error != 0) {
    errno = error;
    return -1;
  }
  return pread(fd, buffer, Shorten(bytes), offset);
}

ssize_t FaultInjectionFileIo::Pwrite(int fd, const void* buffer, size_t bytes, off_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const int error = FailureFor(write_rules_, fd); error != 0) {
    errno = error;
    return -1;
  }
  bytes = Shorten(bytes);
  struct stat st {};
  if (fstat(fd, &st) != 0) return -1;
  Written& file = written_[{st.st_dev, st.st_ino}];
  if (file.fd < 0) file.fd = dup(fd);
  UndoRecord undo;
  undo.offset = offset;
  undo.old_size = st.st_size;
  if (offset < st.st_size) {
    undo.old_bytes.resize(std::min<size_t>(bytes, static_cast<size_t>(st.st_size - offset)));
    if (pread(fd, undo.old_bytes.data(), undo.old_bytes.size(), offset) != static_cast<ssize_t>(undo.old_bytes.size())) {
      return -1;
    }
  }
  const ssize_t n = pwrite(fd, buffer, bytes, offset);
  if (n > 0) file.undo.push_back(std::move(undo));
  return n;
}

int FaultInjectionFileIo::Reserve(int fd, off_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (reserve_error_ != 0) {
    ++failed_calls_;
    return reserve_error_;
  }
  return posix_fallocate(fd, 0, bytes);
}

int FaultInjectionFileIo::Sync(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  struct stat st {};
  if (fstat(fd, &st) == 0) {
    auto it = written_.find({st.st_dev, st.st_ino});
    if (it != written_.end()) it->second.undo.clear();
  }
  return fdatasync(fd);
}

int FaultInjectionFileIo::OpenAt(int dir_fd, const char* path, int flags, mode_t mode) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const int error = TriggeredByPath(open_rules_, path); error != 0) {
    errno = error;
    return -1;
  }
  return openat(dir_fd, path, flags, mode);
}

int FaultInjectionFileIo::RenameAt(int from_dir_fd, const char* from, int to_dir_fd, const char* to) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const int error = TriggeredByPath(rename_rules_, from); error != 0) {
    errno = error;
    return -1;
  }
  return renameat(from_dir_fd, from, to_dir_fd, to);
}

int FaultInjectionFileIo::Truncate(int fd, off_t bytes) { return ftruncate(fd, bytes); }

int FaultInjectionFileIo::SyncRange(int fd, off_t offset, off_t bytes, unsigned int flags) {
  return sync_file_range(fd, offset, bytes, flags);
}

int FaultInjectionFileIo::Advise(int fd, off_t offset, off_t bytes, int advice) {
  return posix_fadvise(fd, offset, bytes, advice);
}

bool FaultInjectionFileIo::LoseUnsyncedWrites(const std::string& path_part, int keep_one_in) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool restored = true;
  for (auto& [id, file] : written_) {
    if (PathOfDescriptor(file.fd).find(path_part) == std::string::npos) continue;
    for (size_t i = file.undo.size(); i-- > 0;) {
      if (keep_one_in > 0 && i % static_cast<size_t>(keep_one_in) == 0) continue;
      const UndoRecord& undo = file.undo[i];
      if (!undo.old_bytes.empty()) {
        restored = pwrite(file.fd, undo.old_bytes.data(), undo.old_bytes.size(), undo.offset) ==
                       static_cast<ssize_t>(undo.old_bytes.size()) && restored;
      }
      struct stat st {};
      if (fstat(file.fd, &st) == 0 && st.st_size > undo.old_size) {
        restored = ftruncate(file.fd, undo.old_size) == 0 && restored;
      }
    }
    file.undo.clear();
  }
  return restored;
}

}  // namespace gridcast
