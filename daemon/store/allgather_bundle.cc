#include "daemon/store/allgather_bundle.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/safe_path.h"
#include "common/units.h"
#include "daemon/store/directory_archive.h"
#include "common/file_io.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// Whole-file descriptor that closes itself.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

Status CheckBundleParts(const std::vector<BundlePart>& parts, uint32_t members, uint64_t chunk_bytes,
                        uint64_t size_bytes) {
  if (chunk_bytes == 0) return Status::InvalidArgument("an allgather needs a chunk size");
  std::set<std::string> names;
  std::set<uint32_t> holders;
  uint64_t next = 0;
  for (const BundlePart& part : parts) {
    const std::string where = "part '" + part.name + "'";
    if (part.member >= members) return Status::InvalidArgument(where + ": its holder is not a member");
    if (!holders.insert(part.member).second) return Status::InvalidArgument(where + ": its holder holds two parts");
    if (part.name.find('/') != std::string::npos) return Status::InvalidArgument(where + ": not one path component");
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(part.name).WithContext(where));
    if (!names.insert(part.name).second) return Status::InvalidArgument(where + ": two parts have that name");
    if (part.chunks != CeilDiv(part.size_bytes, chunk_bytes)) {
      return Status::InvalidArgument(where + ": " + std::to_string(part.chunks) + " chunks do not hold " +
                                     std::to_string(part.size_bytes) + " bytes");
    }
    if (part.first_chunk != next) return Status::InvalidArgument(where + ": does not follow the part before it");
    // Checked before adding: huge parts must not wrap the count around to the bundle's.
    if (part.chunks > size_bytes / chunk_bytes - next) {
      return Status::InvalidArgument(where + ": ends past the bundle's " + std::to_string(size_bytes) + " bytes");
    }
    next += part.chunks;
  }
  if (next > size_bytes / chunk_bytes || next * chunk_bytes != size_bytes) {
    return Status::InvalidArgument("the parts hold " + std::to_string(next) + " chunks, the bundle is " +
                                   std::to_string(size_bytes) + " bytes");
  }
  return Status::Ok();
}

Result<std::string> DirectoryOfBundle(const std::string& bundle_name) {
  const std::string suffix = kAllgatherBundleSuffix;
  if (bundle_name.size() <= suffix.size() || !bundle_name.ends_with(suffix)) {
    return Status::InvalidArgument("an allgather bundle is named NAME" + suffix + ", not '" + bundle_name + "'");
  }
  std::string directory = bundle_name.substr(0, bundle_name.size() - suffix.size());
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(directory));
  return directory;
}

Result<std::vector<Digest>> HashPaddedChunks(int fd, uint64_t size_bytes, uint64_t chunk_bytes, ChunkDigest digest) {
  std::vector<Digest> hashes;
  std::vector<uint8_t> buffer(chunk_bytes);
  for (uint64_t offset = 0; offset < size_bytes; offset += chunk_bytes) {
    const uint64_t bytes = std::min(chunk_bytes, size_bytes - offset);
    GRIDCAST_RETURN_IF_ERROR(PreadFull(SystemFileIo(), fd, std::span(buffer).first(bytes), offset));
    std::fill(buffer.begin() + static_cast<ptrdiff_t>(bytes), buffer.end(), 0);
    hashes.push_back(HashChunk(digest, buffer));
  }
  return hashes;
}

Status SeedPart(PayloadStore& store, int fd, const BundlePart& part) {
  const uint64_t chunk_bytes = store.identity().chunk_bytes;
  std::vector<uint8_t> buffer(chunk_bytes);
  for (uint64_t i = 0; i < part.chunks; ++i) {
    const uint64_t chunk = part.first_chunk + i;
    if (store.Has(chunk)) continue;
    const uint64_t offset = i * chunk_bytes;
    const uint64_t bytes = std::min(chunk_bytes, part.size_bytes - offset);
    GRIDCAST_RETURN_IF_ERROR(PreadFull(SystemFileIo(), fd, std::span(buffer).first(bytes), offset)
                                 .WithContext("part '" + part.name + "' at " + part.path));
    std::fill(buffer.begin() + static_cast<ptrdiff_t>(bytes), buffer.end(), 0);
    Status written = store.WriteChunk(chunk, buffer);
    if (written.code() == StatusCode::kDataLoss) {
      return Status::DataLoss("part '" + part.name + "' at " + part.path + " changed since the allgather began");
    }
    GRIDCAST_RETURN_IF_ERROR(written);
  }
  return Status::Ok();
}

Status SplitBundle(const std::string& data_dir, const std::string& bundle_name, const std::vector<BundlePart>& parts,
                   uint64_t chunk_bytes, const std::string& tag, bool sync) {
  GRIDCAST_ASSIGN_OR_RETURN(const std::string directory, DirectoryOfBundle(bundle_name));
  const fs::path root(data_dir);
  const fs::path bundle = root / bundle_name;
  const fs::path scratch = root / ".gridcast" / ("splitting-" + tag);
  const std::string what = "splitting " + bundle_name;
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (!fs::create_directories(scratch, ec)) return Status::Internal(what + ": cannot create " + scratch.string());
  Status split = [&]() -> Status {
    Fd in{open(bundle.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
    if (in.fd < 0) return ErrnoStatus(what + ": cannot open it", errno);
    for (const BundlePart& part : parts) {
      const fs::path file = scratch / part.name;
      Fd out{open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
      if (out.fd < 0) return ErrnoStatus(what + ": cannot create " + file.string(), errno);
      GRIDCAST_RETURN_IF_ERROR(CopyFileRange(in.fd, part.first_chunk * chunk_bytes, out.fd, part.size_bytes)
                                   .WithContext(what + ": part '" + part.name + "'"));
    }
    return Status::Ok();
  }();
  if (!split.ok()) {
    fs::remove_all(scratch, ec);
    return split;
  }
  GRIDCAST_RETURN_IF_ERROR(ReplaceDirectory(scratch, root / directory, sync).WithContext(what));
  fs::remove(bundle, ec);
  fs::remove(PayloadStatePath(data_dir, bundle_name, ".chunks"), ec);
  return Status::Ok();
}

}  // namespace gridcast
