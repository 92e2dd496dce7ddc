// FileIo: the calls PayloadStore makes on the bytes of its files, behind an interface so that
// tests can make them fail (as LevelDB's Env lets its fault-injection tests do): errors such
// as EIO and ENOSPC, short and interrupted transfers, and a power loss that takes the writes
// no sync covered. The daemon uses the system's calls.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace gridcast {

class FileIo {
 public:
  virtual ~FileIo() = default;
  // As pread(2) and pwrite(2): the bytes transferred, or -1 with errno set.
  virtual ssize_t Pread(int fd, void* buffer, size_t bytes, off_t offset) = 0;
  virtual ssize_t Pwrite(int fd, const void* buffer, size_t bytes, off_t offset) = 0;
  // As posix_fallocate(fd, 0, bytes): 0 or an errno value.
  virtual int Reserve(int fd, off_t bytes) = 0;
  // As fdatasync(2): 0, or -1 with errno set.
  virtual int Sync(int fd) = 0;
};

// The system's calls; lives for the whole process.
FileIo& SystemFileIo();

}  // namespace gridcast
