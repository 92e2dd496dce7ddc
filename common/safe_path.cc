#include "common/safe_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gridcast {
namespace {

std::vector<std::string_view> Components(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    parts.push_back(name.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

}  // namespace

Status CheckPayloadName(std::string_view name) {
  if (name.empty()) return Status::InvalidArgument("payload name is empty");
  if (name.size() > 1024) return Status::InvalidArgument("payload name is longer than 1024 bytes");
  if (name.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("payload name contains a NUL byte");
  }
  if (name.front() == '/') {
    return Status::InvalidArgument("payload name '" + std::string(name) +
                                   "' is absolute; names are relative to the data directory");
  }
  for (std::string_view part : Components(name)) {
    if (part.empty() || part == "." || part == "..") {
      return Status::InvalidArgument("payload name '" + std::string(name) +
                                     "' has an empty, '.' or '..' component");
    }
    if (part.size() > 255) return Status::InvalidArgument("payload name component too long");
    if (part.front() == '.' && part.size() >= 9 && part.substr(0, 9) == ".gridcast") {
      return Status::InvalidArgument("payload names may not use the reserved '.gridcast' prefix");
    }
  }
  return Status::Ok();
}

DirFd& DirFd::operator=(DirFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirFd::~DirFd() {
  if (fd_ >= 0) close(fd_);
}

Result<std::pair<DirFd, std::string>> OpenParentDir(const std::string& data_dir,
                                                    std::string_view name, bool create) {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  DirFd dir(open(data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    return Status::FailedPrecondition("cannot open data directory " + data_dir + ": " +
                                      std::strerror(errno));
  }
  std::vector<std::string_view> parts = Components(name);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string part(parts[i]);
    if (create && mkdirat(dir.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::Internal("cannot create directory '" + part + "': " + std::strerror(errno));
    }
    int next = openat(dir.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return Status::InvalidArgument("payload name '" + std::string(name) + "': '" + part +
                                       "' is a symlink or not a directory");
      }
      return Status::NotFound("cannot open directory '" + part + "': " + std::strerror(errno));
    }
    dir = DirFd(next);
  }
  return std::make_pair(std::move(dir), std::string(parts.back()));
}

bool IsWithin(const std::filesystem::path& path, const std::filesystem::path& root) {
  const std::string p = path.string();
  const std::string r = root.string();
  if (r.empty()) return false;
  return p == r || (p.size() > r.size() && p.compare(0, r.size(), r) == 0 && (r.back() == '/' || p[r.size()] == '/'));
}

Result<std::filesystem::path> ResolveSendPath(const std::string& path, const std::string& data_dir,
                                              const std::string& memory_dir,
                                              const std::vector<std::string>& send_roots, bool in_memory) {
  namespace fs = std::filesystem;
  if (in_memory && memory_dir.empty()) return Status::FailedPrecondition("this daemon keeps nothing in memory");
  fs::path full(path);
  if (full.is_relative()) full = fs::path(in_memory ? memory_dir : data_dir) / full;
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(full, ec);
  if (ec) return Status::PermissionDenied(full.string() + " cannot be resolved: " + ec.message());
  // A root that cannot be resolved confines nothing (IsWithin of an empty root is false).
  auto within = [&](const std::string& root) {
    std::error_code root_ec;
    return !root.empty() && IsWithin(canonical, fs::weakly_canonical(root, root_ec));
  };
  bool allowed = within(data_dir) || within(memory_dir);
  for (const std::string& root : send_roots) allowed = allowed || within(root);
  if (!allowed) {
    return Status::PermissionDenied(full.string() +
                                    " is outside the data directory, the memory directory and the send roots");
  }
  return canonical;
}

}  // namespace gridcast
