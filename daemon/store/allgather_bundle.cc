#include "daemon/store/allgather_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
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

Status SeedPart(PayloadStore& store, int fd, const BundlePart& part, const DigestBatches& rule, const SigningKey& key,
                const PlanId& plan) {
  const std::string what = "part '" + part.name + "' at " + part.path;
  struct stat st {};
  if (fstat(fd, &st) != 0) return ErrnoStatus("stat " + what, errno);
  if (static_cast<uint64_t>(st.st_size) != part.size_bytes) {
    return Status::DataLoss(what + " changed since the allgather began: " + std::to_string(st.st_size) +
                            " bytes, not " + std::to_string(part.size_bytes));
  }
  if (part.chunks == 0) return Status::Ok();
  if (store.digest_log() == nullptr) return Status::Internal(what + ": the bundle has no digest log");
  const uint64_t chunk_bytes = store.identity().chunk_bytes;
  const ChunkDigest kind = store.identity().digest;
  std::vector<uint8_t> buffer;
  for (uint64_t b = rule.BatchOf(part.first_chunk); b <= rule.BatchOf(part.first_chunk + part.chunks - 1); ++b) {
    const DigestBatches::Range range = rule.RangeOf(b);
    const uint64_t offset = (range.first - part.first_chunk) * chunk_bytes;
    const uint64_t bytes = std::min<uint64_t>(range.count * chunk_bytes, part.size_bytes - offset);
    buffer.resize(range.count * chunk_bytes);
    GRIDCAST_RETURN_IF_ERROR(PreadFull(SystemFileIo(), fd, std::span(buffer).first(bytes), offset).WithContext(what));
    std::fill(buffer.begin() + static_cast<std::ptrdiff_t>(bytes), buffer.end(), 0);  // the last chunk's padding
    std::vector<std::span<const uint8_t>> chunks;
    for (uint32_t i = 0; i < range.count; ++i) chunks.push_back(std::span(buffer).subspan(i * chunk_bytes, chunk_bytes));
    DigestBatch batch;
    batch.index = b;
    batch.first_chunk = range.first;
    batch.kind = kind;
    batch.digests.resize(range.count);
    HashChunks(kind, chunks, batch.digests);
    SignDigestBatch(key, plan, batch);
    GRIDCAST_RETURN_IF_ERROR(store.digest_log()->Record(batch).WithContext(what));
    for (uint32_t i = 0; i < range.count; ++i) {
      if (store.Has(range.first + i)) continue;
      bool newly = false;
      GRIDCAST_RETURN_IF_ERROR(store.WriteHashedChunk(range.first + i, chunks[i], batch.digests[i], &newly).WithContext(what));
    }
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
