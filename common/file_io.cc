#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gridcast {
namespace {

class SystemCalls final : public FileIo {
 public:
  ssize_t Pread(int fd, void* buffer, size_t bytes, off_t offset) override { return pread(fd, buffer, bytes, offset); }
  ssize_t Pwrite(int fd, const void* buffer, size_t bytes, off_t offset) override {
    return pwrite(fd, buffer, bytes, offset);
  }
  int Reserve(int fd, off_t bytes) override { return posix_fallocate(fd, 0, bytes); }
  int Sync(int fd) override { return fdatasync(fd); }
  int OpenAt(int dir_fd, const char* path, int flags, mode_t mode) override { return openat(dir_fd, path, flags, mode); }
  int RenameAt(int from_dir_fd, const char* from, int to_dir_fd, const char* to) override {
    return renameat(from_dir_fd, from, to_dir_fd, to);
  }
  int Truncate(int fd, off_t bytes) override { return ftruncate(fd, bytes); }
  int SyncRange(int fd, off_t offset, off_t bytes, unsigned int flags) override {
    return sync_file_range(fd, offset, bytes, flags);
  }
  int Advise(int fd, off_t offset, off_t bytes, int advice) override { return posix_fadvise(fd, offset, bytes, advice); }
};

}  // namespace

FileIo& SystemFileIo() {
  static SystemCalls calls;
  return calls;
}

Status ErrnoStatus(const std::string& what, int error) {
  if (error == ENOSPC || error == EDQUOT) {
    return Status::ResourceExhausted(what + ": disk full (" + std::strerror(error) + ")");
  }
  return Status::Internal(what + ": " + std::strerror(error));
}

Status ErrnoStatus(const std::string& what) { return ErrnoStatus(what, errno); }

Status PreadFull(FileIo& io, int fd, std::span<uint8_t> out, uint64_t offset) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = io.Pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read", errno);
    if (n == 0) return Status::DataLoss("file shorter than expected");
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status PwriteFull(FileIo& io, int fd, std::span<const uint8_t> data, uint64_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = io.Pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write", errno);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status CopyFileRange(int from, uint64_t offset, int to, uint64_t bytes) {
  auto in = static_cast<off64_t>(offset);
  off64_t out = 0;
  while (bytes > 0) {
    const ssize_t n = copy_file_range(from, &in, to, &out, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("copy", errno);
    if (n == 0) return Status::DataLoss("file shorter than expected");
    bytes -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status WriteFileAtomically(const std::string& path, std::string_view text, mode_t mode) {
  const std::string temp = path + ".tmp";
  unlink(temp.c_str());  // left by a writer that died; a new one gets `mode`
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus("cannot create " + temp, errno);
  Status written = fchmod(fd, mode) == 0 ? Status::Ok() : ErrnoStatus("chmod " + temp, errno);  // past the umask
  for (size_t done = 0; written.ok() && done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) written = ErrnoStatus("cannot write " + temp, errno);
    else done += static_cast<size_t>(n);
  }
  if (written.ok() && fsync(fd) != 0) written = ErrnoStatus("cannot sync " + temp, errno);
  close(fd);
  if (written.ok() && rename(temp.c_str(), path.c_str()) != 0) written = ErrnoStatus("cannot rename " + temp, errno);
  if (!written.ok()) unlink(temp.c_str());
  return written;
}

}  // namespace gridcast
