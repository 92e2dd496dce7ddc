#include "daemon/participant/payload_directories.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/safe_path.h"

namespace gridcast {

Result<std::filesystem::path> PayloadDirectories::ResolveSend(const std::string& path, bool in_memory) const {
  return ResolveSendPath(path, data_dir, memory_dir, send_roots, in_memory);
}

Result<int> OpenRegularFile(const std::filesystem::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::NotFound("cannot open " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument(path.string() + " is not a regular file");
  }
  return fd;
}

}  // namespace gridcast
