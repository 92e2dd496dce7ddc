// FileIo: the calls PayloadStore makes on its files, from opening them to renaming them into
// place, behind an interface so that tests can make them fail (as LevelDB's Env lets its
// fault-injection tests do): errors such as EIO and ENOSPC, short and interrupted transfers, a
// crash between a write and a rename, and a power loss that takes the writes no sync covered.
// The daemon uses the system's calls.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "include/gridcast/result.h"

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
  // As openat(2): a descriptor, or -1 with errno set.
  virtual int OpenAt(int dir_fd, const char* path, int flags, mode_t mode) = 0;
  // As renameat(2): 0, or -1 with errno set.
  virtual int RenameAt(int from_dir_fd, const char* from, int to_dir_fd, const char* to) = 0;
  // As ftruncate(2): 0, or -1 with errno set.
  virtual int Truncate(int fd, off_t bytes) = 0;
  // As sync_file_range(2) (start writing back, or wait for it): 0, or -1 with errno set.
  virtual int SyncRange(int fd, off_t offset, off_t bytes, unsigned int flags) = 0;
  // As posix_fadvise(2) (drop written pages from the page cache): 0 or an errno value.
  virtual int Advise(int fd, off_t offset, off_t bytes, int advice) = 0;
};

// The system's calls; lives for the whole process.
FileIo& SystemFileIo();

// `what` failed with errno `error`: ResourceExhausted ("disk full") for ENOSPC and EDQUOT,
// Internal otherwise.
Status ErrnoStatus(const std::string& what, int error);
// The same for the call that just failed (errno).
Status ErrnoStatus(const std::string& what);
// All of `out` from `offset`, through short and interrupted reads; DataLoss when the file ends
// first.
Status PreadFull(FileIo& io, int fd, std::span<uint8_t> out, uint64_t offset);
// All of `data` at `offset`, through short and interrupted writes.
Status PwriteFull(FileIo& io, int fd, std::span<const uint8_t> data, uint64_t offset);
// `bytes` of `from` from `offset` on, to the start of `to`, copied in the kernel
// (copy_file_range: no pass through user space); DataLoss when `from` ends first.
Status CopyFileRange(int from, uint64_t offset, int to, uint64_t bytes);

// The whole of the file at `path`; InvalidArgument "cannot read PATH" when it cannot be read.
Result<std::string> ReadTextFile(const std::string& path);

// Replaces `path` with `text` all at once (a temporary file beside it, synced, renamed over it):
// a reader sees the old file or the new one. The file has `mode` from its creation on, so a
// secret is never readable by others, not even while it is written.
Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode);

}  // namespace gridcast
