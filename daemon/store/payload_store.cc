#include "daemon/store/payload_store.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/hex.h"
#include "common/payload_digests.h"
#include "daemon/store/state_files.h"

namespace gridcast {
namespace {

// ENOSPC when the file system holding `fd` lacks the free space that `fd` still needs to grow
// to `bytes`, else 0 (or the errno of the check).
int MissingSpace(int fd, uint64_t bytes) {
  struct stat st {};
  struct statvfs fs {};
  if (fstat(fd, &st) != 0 || fstatvfs(fd, &fs) != 0) return errno;
  const uint64_t held = static_cast<uint64_t>(st.st_blocks) * 512;
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return bytes > held && bytes - held > free_bytes ? ENOSPC : 0;
}

// What every store that receives needs of the identity it is given.
Status CheckIdentity(const PayloadIdentity& identity) {
  if (identity.chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  if (identity.chunk_hashes.size() != identity.NumChunks()) {
    return Status::InvalidArgument("payload has " + std::to_string(identity.NumChunks()) + " chunks but " +
                                   std::to_string(identity.chunk_hashes.size()) + " chunk hashes");
  }
  return Status::Ok();
}

}  // namespace

PayloadStore::~PayloadStore() {
  if (mapped_ != nullptr) munmap(mapped_, mapped_bytes_);
  if (fd_ >= 0) close(fd_);
  if (state_fd_ >= 0) close(state_fd_);
}

bool PayloadStore::Has(uint64_t chunk) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunk < have_.size() && have_[chunk];
}

std::vector<uint8_t> PayloadStore::BitmapBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<uint8_t> bytes((have_.size() + 7) / 8, 0);
  for (size_t c = 0; c < have_.size(); ++c) {
    if (have_[c]) bytes[c / 8] |= static_cast<uint8_t>(1u << (c % 8));
  }
  return bytes;
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenSource(const std::string& path, uint64_t chunk_bytes,
                                                               ChunkDigest digest, FileIo& io) {
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  return HashOpenFile(fd, path, chunk_bytes, digest, io);
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenFilling(const std::string& path, PayloadIdentity identity,
                                                                FileIo& io) {
  GRIDCAST_RETURN_IF_ERROR(CheckIdentity(identity));
  if (identity.size_bytes == 0 && identity.sha256 != Sha256({})) {
    return Status::InvalidArgument("the SHA-256 declared for an empty payload is not that of no bytes");
  }
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::unique_ptr<PayloadStore> store(new PayloadStore(io));
  store->fd_ = fd;
  store->base_name_ = std::filesystem::path(path).filename().string();
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
  const uint64_t n = identity.NumChunks();
  store->identity_ = std::move(identity);
  store->have_.assign(n, false);
  store->stored_hashes_.resize(n);
  store->filled_whole_ = std::make_unique<Sha256Stream>();
  // Nothing to finalize: the file is the sender's, under its own name.
  store->finalized_ = true;
  return store;
}

Result<uint64_t> PayloadStore::VerifyFilled() {
  struct stat st {};
  if (fstat(fd_, &st) != 0) return ErrnoStatus("stat " + base_name_, errno);
  // A sender that gives up removes the file: the rest will not come.
  if (st.st_nlink == 0) return Status::Aborted(base_name_ + " was removed by its sender before it was whole");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > identity_.size_bytes) {
    return Status::InvalidArgument(base_name_ + " grew to " + std::to_string(size) + " bytes, past the " +
                                   std::to_string(identity_.size_bytes) + " its sender declared");
  }
  uint64_t newly = 0;
  std::vector<uint8_t> buffer;  // taken only when a chunk is there: most polls find none
  for (; next_filled_ < identity_.NumChunks(); ++next_filled_, ++newly) {
    const uint64_t c = next_filled_;
    if (ChunkOffset(c) + identity_.ChunkSize(c) > size) break;
    buffer.resize(identity_.LargestChunk());
    GRIDCAST_ASSIGN_OR_RETURN(const Digest digest, HashStoredChunk(c, buffer));
    if (digest != identity_.chunk_hashes[c]) {
      return Status::DataLoss(ChunkName(c) + " as written differs from the " + std::string(DigestName(identity_.digest)) +
                              " its sender declared for it");
    }
    filled_whole_->Update({buffer.data(), identity_.ChunkSize(c)});
    if (c + 1 == identity_.NumChunks() && filled_whole_->Finish() != identity_.sha256) {
      return Status::DataLoss(base_name_ + " as written differs from the whole-payload SHA-256 its sender declared");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    GRIDCAST_RETURN_IF_ERROR(MarkVerified(c, digest));
  }
  return newly;
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenHeld(
    const std::string& data_dir, const std::string& name,
    const std::function<uint64_t(uint64_t size_bytes)>& chunk_bytes_for_size) {
  if (name.ends_with(".part")) {
    return Status::InvalidArgument("'" + name + "' is a payload still being received, not a complete one");
  }
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/false));
  const int fd = openat(parent.first.get(), parent.second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ELOOP) return Status::InvalidArgument("payload name '" + name + "' is a symlink");
  if (fd < 0) return Status::NotFound("this daemon holds no complete payload '" + name + "'");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidArgument("payload '" + name + "' is not a regular file");
  }
  return HashOpenFile(fd, name, chunk_bytes_for_size(static_cast<uint64_t>(st.st_size)), ChunkDigest::kSha256,
                      SystemFileIo());
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::HashOpenFile(int fd, const std::string& label,
                                                                 uint64_t chunk_bytes, ChunkDigest digest,
                                                                 FileIo& io) {
  std::unique_ptr<PayloadStore> store(new PayloadStore(io));
  store->fd_ = fd;
  if (chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  struct stat st {};
  if (fstat(store->fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(label + " is not a regular file");
  }
  PayloadIdentity& id = store->identity_;
  id.size_bytes = static_cast<uint64_t>(st.st_size);
  id.chunk_bytes = chunk_bytes;
  id.digest = digest;
  const uint64_t n = id.NumChunks();
  // Two passes over the file before the first byte can move, on every core.
  GRIDCAST_ASSIGN_OR_RETURN(
      PayloadDigests digests,
      DigestPayload(id.size_bytes, chunk_bytes, digest,
                    [&](uint64_t offset, uint64_t length, std::vector<uint8_t>& scratch)
                        -> Result<std::span<const uint8_t>> {
                      scratch.resize(length);
                      GRIDCAST_RETURN_IF_ERROR(PreadFull(*store->io_, fd, scratch, offset).WithContext(label));
                      return std::span<const uint8_t>(scratch);
                    }));
  id.chunk_hashes = std::move(digests.chunk_hashes);
  id.sha256 = digests.sha256;
  store->stored_hashes_ = id.chunk_hashes;
  store->have_.assign(n, true);
  store->verified_ = n;
  store->finalized_ = true;
  return store;
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenForRankMemory(const std::string& name,
                                                                      PayloadIdentity identity,
                                                                      std::shared_ptr<RankMemory> destination) {
  GRIDCAST_RETURN_IF_ERROR(CheckIdentity(identity));
  if (destination == nullptr || destination->regions() == 0) {
    return Status::InvalidArgument("no lent memory to receive " + name + " into");
  }
  std::unique_ptr<PayloadStore> store(new PayloadStore(SystemFileIo()));
  store->base_name_ = name;
  const uint64_t n = identity.NumChunks();
  store->identity_ = std::move(identity);
  store->have_.assign(n, false);
  store->stored_hashes_.assign(n, Digest{});
  store->rank_memory_ = std::move(destination);
  return store;
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenLentSource(const std::string& name, PayloadIdentity identity,
                                                                   std::shared_ptr<RankMemory> lent) {
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<PayloadStore> store,
                            OpenForRankMemory(name, std::move(identity), std::move(lent)));
  store->stored_hashes_ = store->identity_.chunk_hashes;
  store->have_.assign(store->identity_.NumChunks(), true);
  store->verified_ = store->identity_.NumChunks();
  store->finalized_ = true;
  return store;
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenForReceive(const std::string& data_dir,
                                                                   const std::string& name,
                                                                   PayloadIdentity identity, FileIo& io,
                                                                   Space space) {
  GRIDCAST_RETURN_IF_ERROR(CheckIdentity(identity));
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/true));
  std::unique_ptr<PayloadStore> store(new PayloadStore(io));
  store->identity_ = std::move(identity);
  store->dir_ = std::move(parent.first);
  store->base_name_ = std::move(parent.second);
  store->chunks_path_ = PayloadStatePath(data_dir, name, ".chunks");
  const uint64_t n = store->identity_.NumChunks();
  store->have_.assign(n, false);
  store->stored_hashes_.assign(n, Digest{});
  const int dir = store->dir_.get();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(store->chunks_path_).parent_path(), ec);
  if (ec) return Status::Internal("cannot create the state directory of " + data_dir + ": " + ec.message());

  // A complete copy from an earlier broadcast of the same payload needs nothing.
  int final_fd = store->io_->OpenAt(dir, store->base_name_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (final_fd >= 0) {
    struct stat st {};
    if (fstat(final_fd, &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) == store->identity_.size_bytes) {
      store->fd_ = final_fd;
      if (store->VerifyWholeFile()) {
        store->finalized_ = true;
        GRIDCAST_RETURN_IF_ERROR(WriteChunkList(*store->io_, store->chunks_path_, store->identity_, /*sync=*/false));
        return store;
      }
      store->fd_ = -1;
      store->have_.assign(n, false);
      store->verified_ = 0;
    }
    close(final_fd);
  } else if (errno == ELOOP) {
    return Status::InvalidArgument("payload name '" + name + "' is a symlink");
  }

  const std::string part = store->base_name_ + ".part";
  const bool part_existed = faccessat(dir, part.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0;
  store->fd_ = store->io_->OpenAt(dir, part.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (store->fd_ < 0) return ErrnoStatus("cannot open " + name + ".part", errno);
  // Reserve the space now: a full disk is reported before the broadcast starts. A file made
  // just for this holds nothing verified: it goes, not to keep what space it got.
  if (store->identity_.size_bytes > 0) {
    int error = space == Space::kReserve
                    ? store->io_->Reserve(store->fd_, static_cast<off_t>(store->identity_.size_bytes))
                    : MissingSpace(store->fd_, store->identity_.size_bytes);
    if (error != 0 && error != EOPNOTSUPP) {
      if (!part_existed) unlinkat(dir, part.c_str(), 0);
      return ErrnoStatus("reserving " + name, error);
    }
  }
  if (store->io_->Truncate(store->fd_, static_cast<off_t>(store->identity_.size_bytes)) != 0) {
    return ErrnoStatus("sizing " + name + ".part", errno);
  }

  GRIDCAST_RETURN_IF_ERROR(store->ResumeFromBitmap(PayloadStatePath(data_dir, name, ".state")));
  return store;
}

Status PayloadStore::ResumeFromBitmap(const std::string& state_path) {
  state_path_ = state_path;
  const uint64_t n = identity_.NumChunks();
  state_fd_ = io_->OpenAt(AT_FDCWD, state_path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (state_fd_ < 0) return ErrnoStatus("cannot open " + state_path_, errno);
  const Digest fingerprint = identity_.Fingerprint();
  std::vector<uint8_t> bitmap((n + 7) / 8, 0);
  if (const std::optional<std::vector<uint8_t>> recorded = ReadResumeBitmap(*io_, state_fd_, fingerprint, n)) {
    // Trust the bitmap only as far as the data on disk still hashes right.
    std::vector<uint8_t> buffer(identity_.LargestChunk());
    for (uint64_t c = 0; c < n; ++c) {
      if (!((*recorded)[c / 8] & (1u << (c % 8)))) continue;
      Result<Digest> digest = HashStoredChunk(c, buffer);
      if (digest.ok() && *digest == identity_.chunk_hashes[c]) {
        have_[c] = true;
        stored_hashes_[c] = *digest;
        ++verified_;
        bitmap[c / 8] |= static_cast<uint8_t>(1u << (c % 8));
      }
    }
  }
  return WriteResumeState(*io_, state_fd_, fingerprint, bitmap).WithContext(state_path_);
}

Result<Digest> PayloadStore::HashStoredChunk(uint64_t chunk, std::vector<uint8_t>& buffer) const {
  std::span<uint8_t> bytes(buffer.data(), identity_.ChunkSize(chunk));
  GRIDCAST_RETURN_IF_ERROR(PreadFull(*io_, fd_, bytes, ChunkOffset(chunk)));
  return HashChunk(identity_.digest, bytes);
}

bool PayloadStore::VerifyWholeFile() {
  const uint64_t n = identity_.NumChunks();
  std::vector<uint8_t> buffer(identity_.LargestChunk());
  for (uint64_t c = 0; c < n; ++c) {
    Result<Digest> digest = HashStoredChunk(c, buffer);
    if (!digest.ok() || *digest != identity_.chunk_hashes[c]) return false;
    stored_hashes_[c] = *digest;
  }
  have_.assign(n, true);
  verified_ = n;
  return true;
}

Status PayloadStore::WriteChunk(uint64_t chunk, std::span<const uint8_t> data, bool* newly_verified) {
  return StoreOne(chunk, data, /*in_place=*/false, newly_verified);
}

Status PayloadStore::StoreOne(uint64_t chunk, std::span<const uint8_t> data, bool in_place, bool* newly_verified) {
  ReceivedChunk received;
  received.chunk = chunk;
  received.data = data;
  received.in_place = in_place;
  StoreReceived({&received, 1});
  if (newly_verified != nullptr) *newly_verified = received.newly_verified;
  return received.status;
}

void PayloadStore::StoreReceived(std::span<ReceivedChunk> received) {
  std::vector<std::span<const uint8_t>> bytes;
  std::vector<ReceivedChunk*> hashed;
  for (ReceivedChunk& r : received) {
    r.newly_verified = false;
    r.status = Status::Ok();
    if (r.in_place) {
      // Hashed without the lock: the claim keeps every other writer out of these bytes.
      bytes.push_back({mapped_ + ChunkOffset(r.chunk), identity_.ChunkSize(r.chunk)});
    } else {
      bool held = false;
      r.status = CheckReceived(r.chunk, r.data, &held);
      if (!r.status.ok() || held) continue;
      bytes.push_back(r.data);
    }
    hashed.push_back(&r);
  }
  std::vector<Digest> digests(bytes.size());
  HashChunks(identity_.digest, bytes, digests);
  for (size_t i = 0; i < hashed.size(); ++i) {
    ReceivedChunk& r = *hashed[i];
    r.status = r.in_place ? MarkHashedInPlace(r.chunk, digests[i], &r.newly_verified)
                          : StoreHashed(r, digests[i], &r.newly_verified);
  }
}

Status PayloadStore::CheckReceived(uint64_t chunk, std::span<const uint8_t> data, bool* held) const {
  *held = false;
  if (chunk >= identity_.NumChunks()) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is out of range");
  }
  if (Has(chunk)) {
    *held = true;
    return Status::Ok();
  }
  if (data.size() != identity_.ChunkSize(chunk)) {
    return Status::DataLoss("chunk " + std::to_string(chunk) + " has " + std::to_string(data.size()) +
                            " bytes, expected " + std::to_string(identity_.ChunkSize(chunk)));
  }
  return Status::Ok();
}

Status PayloadStore::StoreHashed(const ReceivedChunk& received, const Digest& digest, bool* newly_verified) {
  const uint64_t chunk = received.chunk;
  const std::span<const uint8_t> data = received.data;
  if (digest != identity_.chunk_hashes[chunk]) return DigestMismatch(chunk);
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_[chunk]) return Status::Ok();
  if (!claimed_.empty() && claimed_[chunk]) {
    return Status::Aborted(ChunkName(chunk) + " is being received from another connection");
  }
  // The errors name the chunk; built only on failure (this runs once per chunk received).
  if (Status written = rank_memory_ ? rank_memory_->Write(chunk, ChunkOffset(chunk), data, received.buffer)
                                    : PwriteFull(*io_, fd_, data, ChunkOffset(chunk));
      !written.ok()) {
    return written.WithContext("storing " + ChunkName(chunk));
  }
  if (page_cache_window_ > 0 &&
      unsubmitted_bytes_.fetch_add(data.size()) + data.size() >= page_cache_window_ / 8) {
    // Start the writeback early, so chunks are clean (droppable) once they have been forwarded;
    // in batches, since each submission costs a disk kick.
    unsubmitted_bytes_ = 0;
    io_->SyncRange(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
  }
  Status marked = MarkVerified(chunk, digest);
  if (!marked.ok()) return marked.WithContext("recording " + ChunkName(chunk) + " as verified");
  *newly_verified = true;
  return marked;
}

std::string PayloadStore::ChunkName(uint64_t chunk) const {
  return "chunk " + std::to_string(chunk) + " of " + base_name_;
}

Status PayloadStore::DigestMismatch(uint64_t chunk) const {
  return Status::DataLoss(ChunkName(chunk) + " failed its " + std::string(DigestName(identity_.digest)) + " check");
}

Status PayloadStore::WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) {
  if (rank_memory_) return Status::FailedPrecondition(base_name_ + " goes into lent memory, whole chunks only");
  if (chunk >= identity_.NumChunks() || offset > identity_.ChunkSize(chunk) ||
      data.size() > identity_.ChunkSize(chunk) - offset) {
    return Status::InvalidArgument("block of " + std::to_string(data.size()) + " bytes at " +
                                   std::to_string(offset) + " is outside chunk " + std::to_string(chunk));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_[chunk] || finalized_ || (!claimed_.empty() && claimed_[chunk])) return Status::Ok();
  return PwriteFull(*io_, fd_, data, chunk * identity_.chunk_bytes + offset);
}

Status PayloadStore::VerifyStoredChunk(uint64_t chunk, bool* newly_verified) {
  if (newly_verified != nullptr) *newly_verified = false;
  if (chunk >= identity_.NumChunks()) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is out of range");
  }
  // Read and hash under the lock: no block may change the bytes between the check and the mark.
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_[chunk]) return Status::Ok();  // e.g. the push path's chunks handed to libtorrent
  if (rank_memory_) return Status::FailedPrecondition(base_name_ + " goes into lent memory, whole chunks only");
  std::vector<uint8_t> buffer(identity_.ChunkSize(chunk));
  GRIDCAST_ASSIGN_OR_RETURN(Digest digest, HashStoredChunk(chunk, buffer));
  if (digest != identity_.chunk_hashes[chunk]) return DigestMismatch(chunk);
  GRIDCAST_RETURN_IF_ERROR(MarkVerified(chunk, digest));
  if (newly_verified != nullptr) *newly_verified = true;
  return Status::Ok();
}

Status PayloadStore::MarkVerified(uint64_t chunk, const Digest& digest) {
  have_[chunk] = true;
  stored_hashes_[chunk] = digest;
  verified_.fetch_add(1, std::memory_order_relaxed);
  if (state_fd_ < 0) return Status::Ok();  // a filling source: it has no bitmap, it never resumes
  // One byte of the bitmap holds this chunk's bit; rewrite just that byte.
  uint8_t byte = 0;
  const uint64_t first = chunk / 8 * 8;
  for (uint64_t c = first; c < std::min<uint64_t>(first + 8, have_.size()); ++c) {
    if (have_[c]) byte |= static_cast<uint8_t>(1u << (c % 8));
  }
  return PwriteFull(*io_, state_fd_, {&byte, 1}, ResumeBitmapByteOffset(chunk));
}

Status PayloadStore::TouchUnheldChunks() {
  if (rank_memory_) return Status::Ok();  // the lenders' memory is theirs, and taken
  // Mapped: the kernel takes every page without a byte written (fresh tmpfs pages are zero).
  if (mapped_ != nullptr && madvise(mapped_, mapped_bytes_, MADV_POPULATE_WRITE) == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    populated_ = true;
    return Status::Ok();
  }
  const std::vector<uint8_t> zeros(identity_.LargestChunk());
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) {
    if (have_[c]) continue;
    GRIDCAST_RETURN_IF_ERROR(PwriteFull(*io_, fd_, {zeros.data(), identity_.ChunkSize(c)}, ChunkOffset(c)));
  }
  return Status::Ok();
}

Status PayloadStore::MapForReceiving() {
  // A finalized store (sources, copies held whole) receives nothing.
  if (identity_.size_bytes == 0 || finalized_ || mapped_ != nullptr) return Status::Ok();
  // Only memory is received into place: a disk file's pages would be read (or zeroed) in
  // before they are written and then written back, where a pwrite fills them directly.
  struct statfs fs {};
  if (fstatfs(fd_, &fs) != 0 || fs.f_type != TMPFS_MAGIC) return Status::Ok();
  void* pages = mmap(nullptr, identity_.size_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (pages == MAP_FAILED) return ErrnoStatus("mapping " + base_name_ + ".part", errno);
  std::lock_guard<std::mutex> lock(mutex_);
  mapped_ = static_cast<uint8_t*>(pages);
  mapped_bytes_ = identity_.size_bytes;
  claimed_.assign(identity_.NumChunks(), false);
  return Status::Ok();
}

std::span<uint8_t> PayloadStore::ClaimPlace(uint64_t chunk) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (mapped_ == nullptr || chunk >= have_.size() || have_[chunk] || claimed_[chunk]) return {};
    claimed_[chunk] = true;
    if (populated_) return {mapped_ + ChunkOffset(chunk), identity_.ChunkSize(chunk)};
  }
  // Take the chunk's pages in one call (the kernel allocates and maps them at once) instead of
  // one page fault per 4 KiB as the bytes land. Pages shared with a neighbouring chunk are
  // only mapped, never changed. Kernels before 5.14 lack it: then the faults take them.
  static const long page = sysconf(_SC_PAGESIZE);
  const uint64_t begin = ChunkOffset(chunk) / page * page;
  const uint64_t end = std::min<uint64_t>(mapped_bytes_, ChunkOffset(chunk) + identity_.ChunkSize(chunk));
  (void)madvise(mapped_ + begin, end - begin, MADV_POPULATE_WRITE);
  return {mapped_ + ChunkOffset(chunk), identity_.ChunkSize(chunk)};
}

Status PayloadStore::VerifyInPlace(uint64_t chunk, bool* newly_verified) {
  return StoreOne(chunk, {}, /*in_place=*/true, newly_verified);
}

Status PayloadStore::MarkHashedInPlace(uint64_t chunk, const Digest& digest, bool* newly_verified) {
  std::lock_guard<std::mutex> lock(mutex_);
  claimed_[chunk] = false;
  if (have_[chunk]) return Status::Ok();
  if (digest != identity_.chunk_hashes[chunk]) return DigestMismatch(chunk);
  Status marked = MarkVerified(chunk, digest);
  if (!marked.ok()) return marked.WithContext("recording " + ChunkName(chunk) + " as verified");
  *newly_verified = true;
  return Status::Ok();
}

void PayloadStore::ReleasePlace(uint64_t chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (chunk < claimed_.size()) claimed_[chunk] = false;
}

void PayloadStore::ChunkForwarded(uint64_t chunk) {
  if (rank_memory_) return rank_memory_->Forwarded(chunk);
  if (page_cache_window_ == 0 || chunks_path_.empty() || chunk >= identity_.NumChunks()) return;
  std::lock_guard<std::mutex> lock(forwarded_mutex_);
  forwarded_.push_back(chunk);
  forwarded_bytes_ += identity_.ChunkSize(chunk);
  if (forwarded_bytes_ <= page_cache_window_) return;
  // Down to half the window at once, oldest first, in as few contiguous ranges as they form.
  std::vector<uint64_t> oldest;
  while (forwarded_bytes_ > page_cache_window_ / 2) {
    oldest.push_back(forwarded_.front());
    forwarded_bytes_ -= identity_.ChunkSize(forwarded_.front());
    forwarded_.pop_front();
  }
  std::sort(oldest.begin(), oldest.end());
  for (size_t i = 0; i < oldest.size();) {
    size_t j = i + 1;
    while (j < oldest.size() && oldest[j] == oldest[j - 1] + 1) ++j;
    const auto offset = static_cast<off_t>(ChunkOffset(oldest[i]));
    const auto length = static_cast<off_t>(ChunkOffset(oldest[j - 1]) + identity_.ChunkSize(oldest[j - 1])) - offset;
    // Pages still dirty or under writeback are not dropped: wait for them (a disk slower than
    // the network holds the workers here, and the windows hold the parent).
    io_->SyncRange(fd_, offset, length, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    io_->Advise(fd_, offset, length, POSIX_FADV_DONTNEED);
    i = j;
  }
}

Status PayloadStore::ReadChunk(uint64_t chunk, std::span<uint8_t> out) const {
  if (out.size() != identity_.ChunkSize(chunk)) {
    return Status::InvalidArgument("read of chunk " + std::to_string(chunk) + " has the wrong size");
  }
  return ReadBlock(chunk, 0, out);
}

Status PayloadStore::ReadBlock(uint64_t chunk, uint64_t offset, std::span<uint8_t> out) const {
  if (!Has(chunk)) return Status::FailedPrecondition("chunk " + std::to_string(chunk) + " is not held");
  if (offset > identity_.ChunkSize(chunk) || out.size() > identity_.ChunkSize(chunk) - offset) {
    return Status::InvalidArgument("read outside chunk " + std::to_string(chunk));
  }
  if (rank_memory_) return Status::FailedPrecondition(base_name_ + " goes into lent memory, whole chunks only");
  return PreadFull(*io_, fd_, out, chunk * identity_.chunk_bytes + offset);
}

Result<Digest> PayloadStore::Finalize(bool sync) {
  Digest digest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    digest = ChunkListDigest(identity_.digest, stored_hashes_);
  }
  if (finalized_) return digest;
  if (!Complete()) return Status::FailedPrecondition("payload is not complete");
  if (digest != identity_.ListDigest()) {
    return Status::DataLoss("the stored chunks' digests do not match the source's chunk list");
  }
  if (rank_memory_) {  // the lenders hold it; nothing here to sync, record or rename
    finalized_ = true;
    return digest;
  }
  if (sync && io_->Sync(fd_) != 0) return ErrnoStatus("sync", errno);
  GRIDCAST_RETURN_IF_ERROR(WriteChunkList(*io_, chunks_path_, identity_, sync));
  const std::string part = base_name_ + ".part";
  if (io_->RenameAt(dir_.get(), part.c_str(), dir_.get(), base_name_.c_str()) != 0) {
    return ErrnoStatus("rename to final name", errno);
  }
  if (sync) fsync(dir_.get());
  close(state_fd_);
  state_fd_ = -1;
  unlink(state_path_.c_str());
  finalized_ = true;
  return digest;
}

Result<ChunkRef> PayloadStore::ChunkAt(uint64_t chunk) const {
  const uint64_t offset = ChunkOffset(chunk);
  const uint64_t length = identity_.ChunkSize(chunk);
  if (rank_memory_) return rank_memory_->At(chunk, offset, length);
  if (mapped_ != nullptr) return ChunkRef::InMemory({mapped_ + offset, length});
  return ChunkRef::InFile(fd_, offset, length);
}

Result<PayloadIdentity> PayloadStore::RecordedIdentity(const std::string& data_dir, const std::string& name) {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  return ReadChunkList(SystemFileIo(), PayloadStatePath(data_dir, name, ".chunks"), name);
}

Result<ScrubReport> PayloadStore::Scrub(const std::string& data_dir, const std::string& name) {
  GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity identity, RecordedIdentity(data_dir, name));
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/false));
  const int fd = openat(parent.first.get(), parent.second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("this daemon holds no complete payload '" + name + "'");
  std::unique_ptr<PayloadStore> store(new PayloadStore(SystemFileIo()));  // owns and closes fd
  store->fd_ = fd;
  store->identity_ = std::move(identity);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status::InvalidArgument("'" + name + "' is not a regular file");
  ScrubReport report;
  report.chunks = store->identity_.NumChunks();
  std::vector<uint8_t> buffer(store->identity_.LargestChunk());
  for (uint64_t c = 0; c < report.chunks; ++c) {
    // A chunk cut off by a shorter file is as bad as a changed one.
    if (store->ChunkOffset(c) + store->identity_.ChunkSize(c) > static_cast<uint64_t>(st.st_size)) {
      report.bad_chunks.push_back(c);
      continue;
    }
    Result<Digest> digest = store->HashStoredChunk(c, buffer);
    if (!digest.ok()) return digest.status().WithContext(name);
    if (*digest != store->identity_.chunk_hashes[c]) report.bad_chunks.push_back(c);
  }
  return report;
}

}  // namespace gridcast
