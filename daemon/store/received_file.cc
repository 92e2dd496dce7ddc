#include "daemon/store/received_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "daemon/store/warm_memory.h"
#include "delta/held_chunks.h"

namespace gridcast {
namespace {

// An earlier copy of a payload (its file, owned), read through the store's FileIo. What is
// read leaves the page cache (the search keeps its own copy of the bytes it still needs): the
// new copy replaces this one, and its pages are taken from those freed, not fresh ones (fresh
// pages made the copy into the new file 9x dearer than the read, on this host's netgrid).
class EarlierCopyFile : public ByteSource {
 public:
  EarlierCopyFile(FileIo& io, int fd, uint64_t size) : io_(io), fd_(fd), size_(size) {}
  ~EarlierCopyFile() override { close(fd_); }
  EarlierCopyFile(const EarlierCopyFile&) = delete;
  EarlierCopyFile& operator=(const EarlierCopyFile&) = delete;
  uint64_t size() const override { return size_; }
  Status ReadAt(uint64_t offset, std::span<uint8_t> out) const override {
    GRIDCAST_RETURN_IF_ERROR(PreadFull(io_, fd_, out, offset));
    io_.Advise(fd_, static_cast<off_t>(offset), static_cast<off_t>(out.size()), POSIX_FADV_DONTNEED);
    return Status::Ok();
  }

 private:
  FileIo& io_;
  int fd_;
  uint64_t size_;
};

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

}  // namespace

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenForReceive(const std::string& data_dir,
                                                                   const std::string& name,
                                                                   PayloadIdentity identity, FileIo& io,
                                                                   const ReceiveOptions& options) {
  GRIDCAST_RETURN_IF_ERROR(CheckReceivable(identity));
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/true));
  const std::string chunks_path = PayloadStatePath(data_dir, name, ".chunks");
  const std::string state_dir = std::filesystem::path(chunks_path).parent_path().string();
  std::unique_ptr<ReceivedFile> store(
      new ReceivedFile(std::move(identity), std::move(parent.second), io, std::move(parent.first), state_dir));
  store->chunks_path_ = chunks_path;
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return Status::Internal("cannot create the state directory of " + data_dir + ": " + ec.message());
  // A symlink under the payload's name is refused whether or not it would be searched.
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<const ByteSource> same_name,
                            store->OpenEarlierCopy(store->dir_.get(), store->base_name_, "payload name '" + name + "'"));
  if (store->identity_.OffersReuse()) {
    if (options.earlier.bytes != nullptr) {
      store->earlier_copy_ = options.earlier.bytes;
    } else if (options.earlier.name.empty()) {
      store->earlier_copy_ = std::move(same_name);
    } else {
      // Another name's copy: below data_dir like any payload, without a symlink on the way. A
      // member that lacks it receives everything.
      Result<std::pair<DirFd, std::string>> base_parent = OpenParentDir(data_dir, options.earlier.name, /*create=*/false);
      if (!base_parent.ok() && base_parent.status().code() != StatusCode::kNotFound) {
        return base_parent.status().WithContext("the base");
      }
      if (base_parent.ok()) {
        GRIDCAST_ASSIGN_OR_RETURN(store->earlier_copy_, store->OpenEarlierCopy(base_parent->first.get(),
                                                                               base_parent->second, "the base"));
      }
    }
  }
  // An earlier copy under the payload's own name, of the same size, is linked as the ".part"
  // (no byte copied): its chunks that hash right where they are need no write at all. Not
  // when the file is written at once (taking memory) or mapped for writes (in place).
  const bool may_link = store->identity_.OffersReuse() && options.earlier.name.empty() &&
                        options.earlier.bytes == nullptr && !options.in_place && !options.take_memory_now;
  GRIDCAST_RETURN_IF_ERROR(store->OpenPart(name, options.space, options.warm, may_link));
  GRIDCAST_RETURN_IF_ERROR(store->OpenResumeState(PayloadStatePath(data_dir, name, ".state")));
  if (store->identity_.chunk_hashes.size() == store->identity_.NumChunks()) {
    // Every digest is known already: take what is here now, a batch's worth at a time.
    const DigestBatches rule(store->identity_.chunk_bytes, store->identity_.NumChunks());
    const std::vector<uint32_t>& weak = store->identity_.weak_checksums;
    for (uint64_t b = 0; b < rule.count() && !store->Complete(); ++b) {
      const DigestBatches::Range range = rule.RangeOf(b);
      (void)store->TakeKnownChunks(range.first, range.count,
                                   weak.empty() ? std::span<const uint32_t>() : std::span(weak).subspan(range.first, range.count));
    }
    if (store->reused_chunks_ > 0) {
      spdlog::info("{}: {} of {} chunks taken from an earlier copy", store->base_name_, store->reused_chunks_.load(),
                   store->identity_.NumChunks());
    }
  }
  store->page_cache_window_ = options.page_cache_window_bytes;
  if (options.in_place) GRIDCAST_RETURN_IF_ERROR(store->MapIntoPlace());
  if (options.take_memory_now) GRIDCAST_RETURN_IF_ERROR(store->TakeMemoryNow());
  return std::unique_ptr<PayloadStore>(std::move(store));
}

Result<std::shared_ptr<const ByteSource>> ReceivedFile::OpenEarlierCopy(int dir, const std::string& file,
                                                                        const std::string& what) {
  const int fd = io_->OpenAt(dir, file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0 && errno == ELOOP) return Status::InvalidArgument(what + " is a symlink");
  if (fd < 0) return std::shared_ptr<const ByteSource>();
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return std::shared_ptr<const ByteSource>();
  }
  return std::shared_ptr<const ByteSource>(std::make_shared<EarlierCopyFile>(*io_, fd, static_cast<uint64_t>(st.st_size)));
}

Status ReceivedFile::OpenPart(const std::string& name, ReceiveSpace space, WarmMemory* warm, bool may_link) {
  const int dir = dir_.get();
  const std::string part = base_name_ + ".part";
  struct stat copy {};
  struct stat existing {};
  const bool copy_exists =
      fstatat(dir, base_name_.c_str(), &copy, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(copy.st_mode);
  bool part_existed = fstatat(dir, part.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0;
  const bool copy_fits = may_link && copy_exists && identity_.size_bytes > 0 &&
                         static_cast<uint64_t>(copy.st_size) == identity_.size_bytes;
  // An attempt before a restart left the link, but this one may not write through it (another
  // size, no reuse): it goes, or it would change the earlier copy.
  if (part_existed && copy_exists && !copy_fits && existing.st_ino == copy.st_ino && existing.st_dev == copy.st_dev) {
    if (unlinkat(dir, part.c_str(), 0) != 0) return ErrnoStatus("cannot remove the linked " + name + ".part", errno);
    part_existed = false;
  }
  if (!part_existed && copy_fits && linkat(dir, base_name_.c_str(), dir, part.c_str(), 0) == 0) linked_ = true;
  if (!part_existed && !linked_ && warm != nullptr && identity_.size_bytes > 0) warm->Take(dir, part, identity_.size_bytes);
  fd_ = io_->OpenAt(dir, part.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) return ErrnoStatus("cannot open " + name + ".part", errno);
  struct stat opened {};
  // An attempt before a restart may have left the link.
  if (copy_fits && fstat(fd_, &opened) == 0 && opened.st_ino == copy.st_ino && opened.st_dev == copy.st_dev) {
    linked_ = true;
  }
  if (linked_) return Status::Ok();  // its space and size are the copy's
  // Reserve the space now: a full disk is reported before the broadcast starts. A file made
  // just for this holds nothing verified: it goes, not to keep what space it got. Past
  // kLargestReservedBytes only the free space is checked: reserving costs about 0.8 ms per GiB
  // on ext4 (1 TiB: 0.85 s, most of a member's Prepare), and chunks take their blocks anyway.
  if (identity_.size_bytes > 0) {
    const bool reserve = space == ReceiveSpace::kReserve && identity_.size_bytes <= kLargestReservedBytes;
    const int error = reserve ? io_->Reserve(fd_, static_cast<off_t>(identity_.size_bytes))
                              : MissingSpace(fd_, identity_.size_bytes);
    if (error != 0 && error != EOPNOTSUPP) {
      if (!part_existed) unlinkat(dir, part.c_str(), 0);
      return ErrnoStatus("reserving " + name, error);
    }
  }
  if (io_->Truncate(fd_, static_cast<off_t>(identity_.size_bytes)) != 0) {
    return ErrnoStatus("sizing " + name + ".part", errno);
  }
  return Status::Ok();
}

Status ReceivedFile::BreakLinkLocked() {
  if (!linked_) return Status::Ok();
  const int dir = dir_.get();
  const std::string part = base_name_ + ".part";
  // Made beside the state files (below the data directory, not listed as a payload), then
  // renamed into place.
  const std::string fresh = chunks_path_ + ".copy";
  const int copy = io_->OpenAt(AT_FDCWD, fresh.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (copy < 0) return ErrnoStatus("cannot make " + fresh, errno);
  // Only what the store holds (or may yet hold after a restart: the bitmap's candidates) is
  // copied; the rest is found in the earlier copy, or received, as without the link.
  const auto kept = [&](uint64_t c) { return have_[c] || (!resume_candidates_.empty() && resume_candidates_[c]); };
  Status copied = io_->Truncate(copy, static_cast<off_t>(identity_.size_bytes)) == 0
                      ? Status::Ok()
                      : ErrnoStatus("sizing " + fresh, errno);
  for (uint64_t c = 0; copied.ok() && c < identity_.NumChunks();) {
    if (!kept(c)) {
      ++c;
      continue;
    }
    uint64_t end = c;
    while (end < identity_.NumChunks() && kept(end)) ++end;
    loff_t from = static_cast<loff_t>(ChunkOffset(c));
    loff_t to = from;
    const loff_t stop = static_cast<loff_t>(std::min(identity_.size_bytes, ChunkOffset(end)));
    while (copied.ok() && from < stop) {
      const ssize_t n = copy_file_range(fd_, &from, copy, &to, static_cast<size_t>(stop - from), 0);
      if (n <= 0) copied = ErrnoStatus("copying chunks of " + base_name_ + " out of its earlier copy", n < 0 ? errno : EIO);
    }
    c = end;
  }
  // The new file takes the ".part" name (the earlier copy keeps its own) and the store's
  // descriptor number, so chunks being sent from it go on reading the same bytes.
  if (copied.ok() && io_->RenameAt(AT_FDCWD, fresh.c_str(), dir, part.c_str()) != 0) {
    copied = ErrnoStatus("rename " + fresh, errno);
  }
  if (copied.ok() && dup2(copy, fd_) < 0) copied = ErrnoStatus("dup2", errno);
  close(copy);
  if (!copied.ok()) {
    unlink(fresh.c_str());
    return copied;
  }
  linked_ = false;
  return Status::Ok();
}

Status ReceivedFile::WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) {
  {
    // Only a block that will be written breaks the link (one for a held chunk, or after
    // Finalize, is dropped by FileStore::WriteBlock).
    std::lock_guard<std::mutex> lock(mutex_);
    if (linked_ && !finalized_ && chunk < identity_.NumChunks() && !have_[chunk]) {
      GRIDCAST_RETURN_IF_ERROR(BreakLinkLocked());
    }
  }
  return FileStore::WriteBlock(chunk, offset, data);
}

Status ReceivedFile::OpenResumeState(const std::string& state_path) {
  state_path_ = state_path;
  const uint64_t n = identity_.NumChunks();
  state_fd_ = io_->OpenAt(AT_FDCWD, state_path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (state_fd_ < 0) return ErrnoStatus("cannot open " + state_path_, errno);
  const Digest fingerprint = identity_.Fingerprint();
  ChunkBits recorded(n, false, spill_dir_);
  if (!ReadResumeBitmap(*io_, state_fd_, fingerprint, recorded)) {
    return ResetResumeState(*io_, state_fd_, fingerprint, n).WithContext(state_path_);
  }
  resume_candidates_ = std::move(recorded);
  return Status::Ok();
}

KnownChunks::Taken ReceivedFile::TakeKnownChunks(uint64_t first, uint64_t count, std::span<const uint32_t> weak) {
  Taken taken;
  if (first >= identity_.NumChunks()) return taken;
  count = std::min(count, identity_.NumChunks() - first);
  std::lock_guard<std::mutex> search(search_mutex_);
  HashInPlace(first, count, taken);
  if (weak.size() == count && earlier_copy_ != nullptr) SearchNear(*earlier_copy_, first, count, weak, taken);
  std::sort(taken.chunks.begin(), taken.chunks.end());
  return taken;
}

uint64_t ReceivedFile::Candidates() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t count = 0;
  for (uint64_t c = resume_candidates_.Find(true); c < resume_candidates_.size(); c = resume_candidates_.Find(true, c + 1)) {
    count += !have_[c];
  }
  return count;
}

void ReceivedFile::HashInPlace(uint64_t first, uint64_t count, Taken& taken) {
  if (resume_candidates_.empty() && !linked_) return;
  // A read error ends the trust there: those chunks are received again.
  (void)HashStoredChunks(
      first, first + count,
      [&](uint64_t c) { return (linked_ || (!resume_candidates_.empty() && resume_candidates_[c])) && !Has(c); },
      [&](uint64_t c, const Digest& digest, std::span<const uint8_t>) {
        if (CheckDigest(c, digest).ok()) {
          std::lock_guard<std::mutex> lock(mutex_);
          const bool candidate = !resume_candidates_.empty() && resume_candidates_[c];
          // Read from the earlier copy, but the link broke since: the ".part" lacks them now.
          if (!candidate && !linked_) return true;
          if (!have_[c] && !Claimed(c) && MarkVerified(c).ok()) {
            taken.chunks.push_back(c);
            if (candidate) {
              ++resumed_chunks_;
              ++taken.resumed_chunks;
            } else {  // the earlier copy's, where it was
              ++reused_chunks_;
              reused_bytes_ += identity_.ChunkSize(c);
              taken.reused_bytes += identity_.ChunkSize(c);
            }
          }
        }
        return true;
      });
}

namespace {

// How far from where a chunk is expected in an earlier copy (its offset, moved as the last
// chunk found there was) it is looked for: the edits docs/delta.md measures (an insertion of
// 64 KiB, a prepend of 4 KiB, an append) move chunks far less.
constexpr uint64_t kSearchBandBytes = 2 << 20;

// Bytes [offset, offset + size) of another source.
class ByteWindow : public ByteSource {
 public:
  ByteWindow(const ByteSource& whole, uint64_t offset, uint64_t size) : whole_(whole), offset_(offset), size_(size) {}
  uint64_t size() const override { return size_; }
  Status ReadAt(uint64_t offset, std::span<uint8_t> out) const override {
    return whole_.ReadAt(offset_ + offset, out);
  }

 private:
  const ByteSource& whole_;
  uint64_t offset_;
  uint64_t size_;
};

}  // namespace

void ReceivedFile::SearchNear(const ByteSource& copy, uint64_t first, uint64_t count, std::span<const uint32_t> weak,
                              Taken& taken) {
  std::vector<ChunkSummary> wanted;
  std::vector<uint64_t> chunks;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t c = first + i;
    if (Has(c)) continue;
    const std::optional<Digest> expected = ExpectedDigest(c);
    if (!expected) continue;
    wanted.push_back({identity_.ChunkSize(c), weak[i], *expected});
    chunks.push_back(c);
  }
  if (chunks.empty()) return;
  const auto around = [&](uint64_t offset, bool below) {
    const int64_t moved = static_cast<int64_t>(offset) + shift_ + (below ? -1 : 1) * static_cast<int64_t>(kSearchBandBytes);
    return static_cast<uint64_t>(std::clamp<int64_t>(moved, 0, static_cast<int64_t>(copy.size())));
  };
  const uint64_t begin = around(ChunkOffset(chunks.front()), true);
  const uint64_t end = around(ChunkOffset(chunks.back()) + identity_.ChunkSize(chunks.back()), false);
  if (begin >= end) return;
  const ByteWindow window(copy, begin, end - begin);
  Result<std::vector<uint64_t>> found =
      FindHeldChunks(window, identity_.digest, wanted, [&](size_t i, std::span<const uint8_t> bytes) {
        TakeFound(chunks[i], bytes, wanted[i].digest, taken);
      });
  if (!found.ok()) {
    spdlog::warn("{}: the earlier copy could not be searched near chunk {} ({}); those chunks are received",
                 base_name_, first, found.status().ToString());
    return;
  }
  for (size_t i = found->size(); i-- > 0;) {
    if ((*found)[i] == kNotHeld) continue;
    shift_ = static_cast<int64_t>(begin + (*found)[i]) - static_cast<int64_t>(ChunkOffset(chunks[i]));
    break;
  }
}

void ReceivedFile::TakeFound(uint64_t chunk, std::span<const uint8_t> bytes, const Digest& digest, Taken& taken) {
  bool newly = false;
  if (WriteHashedChunk(chunk, bytes, digest, &newly).ok() && newly) {
    ++reused_chunks_;
    reused_bytes_ += bytes.size();
    taken.reused_bytes += bytes.size();
    taken.chunks.push_back(chunk);
  }
}

ReceivedFile::~ReceivedFile() {
  if (mapped_ != nullptr) munmap(mapped_, mapped_bytes_);
  if (state_fd_ >= 0) close(state_fd_);
}

Status ReceivedFile::PutVerified(const ReceivedChunk& received) {
  GRIDCAST_RETURN_IF_ERROR(BreakLinkLocked());
  GRIDCAST_RETURN_IF_ERROR(FileStore::PutVerified(received));
  const uint64_t bytes = received.data.size();
  if (page_cache_window_ > 0 && unsubmitted_bytes_.fetch_add(bytes) + bytes >= page_cache_window_ / 8) {
    // Start the writeback early, so chunks are clean (droppable) once they have been forwarded;
    // in batches, since each submission costs a disk kick.
    unsubmitted_bytes_ = 0;
    io_->SyncRange(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
  }
  return Status::Ok();
}

Status ReceivedFile::RecordVerified(uint64_t chunk) {
  if (state_fd_ < 0) return Status::Ok();  // a complete copy adopted: nothing to resume
  // One byte of the bitmap holds this chunk's bit; rewrite just that byte, keeping the bits of
  // an earlier attempt's chunks not checked yet.
  uint8_t byte = 0;
  const uint64_t first = chunk / 8 * 8;
  for (uint64_t c = first; c < std::min<uint64_t>(first + 8, have_.size()); ++c) {
    if (have_[c] || (!resume_candidates_.empty() && resume_candidates_[c])) byte |= static_cast<uint8_t>(1u << (c % 8));
  }
  return PwriteFull(*io_, state_fd_, {&byte, 1}, ResumeBitmapByteOffset(chunk));
}

Status ReceivedFile::Persist(bool sync) {
  if (sync && io_->Sync(fd_) != 0) return ErrnoStatus("sync", errno);
  GRIDCAST_RETURN_IF_ERROR(WriteListTo(*io_, chunks_path_, sync));
  const std::string part = base_name_ + ".part";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Still linked: every chunk was where the earlier copy had it, which holds the name already
    // (and a rename of one link over the other would do nothing). No write comes after this.
    if (linked_ ? unlinkat(dir_.get(), part.c_str(), 0) != 0
                : io_->RenameAt(dir_.get(), part.c_str(), dir_.get(), base_name_.c_str()) != 0) {
      return ErrnoStatus("rename to final name", errno);
    }
    linked_ = false;
  }
  // The rename is durable once the directory is: a power loss after this keeps the final name.
  if (sync && io_->Sync(dir_.get()) != 0) return ErrnoStatus("sync of the directory after the rename", errno);
  close(state_fd_);
  state_fd_ = -1;
  unlink(state_path_.c_str());
  return Status::Ok();
}

StoreCapabilities ReceivedFile::capabilities() {
  StoreCapabilities offered;
  if (mapped_ != nullptr) offered.placement = this;
  if (page_cache_window_ > 0) offered.forwarded = this;
  offered.known = this;
  return offered;
}

Status ReceivedFile::TakeMemoryNow() {
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

Status ReceivedFile::MapIntoPlace() {
  // A finalized store (a complete copy adopted) receives nothing.
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
  claimed_ = ChunkBits(identity_.NumChunks(), false, spill_dir_);
  return Status::Ok();
}

std::span<uint8_t> ReceivedFile::Claim(uint64_t chunk) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (mapped_ == nullptr || chunk >= have_.size() || have_[chunk] || claimed_[chunk]) return {};
    claimed_.Set(chunk);
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

void ReceivedFile::Release(uint64_t chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (chunk < claimed_.size()) claimed_.Set(chunk, false);
}

Result<ChunkRef> ReceivedFile::ChunkAt(uint64_t chunk) const {
  if (mapped_ != nullptr) return ChunkRef::InMemory({mapped_ + ChunkOffset(chunk), identity_.ChunkSize(chunk)});
  return FileStore::ChunkAt(chunk);
}

void ReceivedFile::Forwarded(uint64_t chunk) {
  if (page_cache_window_ == 0 || chunk >= identity_.NumChunks()) return;
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

}  // namespace gridcast
