#include "daemon/store/file_io.h"

#include <fcntl.h>
#include <unistd.h>

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
};

}  // namespace

FileIo& SystemFileIo() {
  static SystemCalls calls;
  return calls;
}

}  // namespace gridcast
