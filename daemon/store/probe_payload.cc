#include "daemon/store/probe_payload.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "common/crypto.h"
#include "common/file_io.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "common/splitmix64.h"

namespace gridcast {
namespace {

// Writes all of `data`, retrying short writes and EINTR.
Status WriteAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoStatus("cannot write the probe payload");
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> WriteProbePayload(const std::string& data_dir, const std::string& name, uint64_t size_bytes) {
  if (size_bytes == 0 || size_bytes > kMaxProbeBytes) {
    return Status::InvalidArgument("probe size must be 1 byte to 64 GiB, not " + std::to_string(size_bytes));
  }
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/true));
  auto& [dir, file] = parent;
  struct statvfs fs_stats {};
  if (fstatvfs(dir.get(), &fs_stats) != 0) return ErrnoStatus("cannot stat the data directory's file system");
  const uint64_t free_bytes = uint64_t{fs_stats.f_bavail} * fs_stats.f_frsize;
  if (free_bytes < size_bytes) {
    return Status::ResourceExhausted("a probe of " + std::to_string(size_bytes) + " bytes does not fit: " +
                                     std::to_string(free_bytes) + " bytes free in " + data_dir);
  }
  uint64_t seed = 0;
  RandomBytes({reinterpret_cast<uint8_t*>(&seed), sizeof seed});
  // The reserved prefix keeps the temporary name apart from every payload name.
  const std::string temp = ".gridcast-probe-" + ToHex({reinterpret_cast<const uint8_t*>(&seed), sizeof seed});
  const int fd = openat(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create the probe payload in " + data_dir);
  SplitMix64 generator(seed);
  std::vector<uint8_t> block(1 << 20);
  Status status;
  for (uint64_t written = 0; status.ok() && written < size_bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size_bytes - written, block.size()));
    FillPseudoRandom({block.data(), n}, generator);
    status = WriteAll(fd, block.data(), n);
    written += n;
  }
  if (close(fd) != 0 && status.ok()) status = ErrnoStatus("cannot write the probe payload");
  if (status.ok() && renameat(dir.get(), temp.c_str(), dir.get(), file.c_str()) != 0) {
    status = ErrnoStatus("cannot move the probe payload to '" + name + "'");
  }
  if (!status.ok()) {
    unlinkat(dir.get(), temp.c_str(), 0);
    return status;
  }
  return (std::filesystem::path(data_dir) / name).string();
}

}  // namespace gridcast
