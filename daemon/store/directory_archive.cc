#include "daemon/store/directory_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "common/safe_path.h"
#include "common/file_io.h"
#include "daemon/store/payload_store.h"

namespace gridcast {

namespace fs = std::filesystem;

namespace {

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
using EntryPtr = std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)>;

constexpr size_t kCopyBytes = 1 << 20;

// Whether `relative` (an entry's path) names something inside the tree: not empty, not
// absolute, no `..`.
bool StaysInside(const fs::path& relative) {
  if (relative.empty() || relative.is_absolute()) return false;
  for (const fs::path& part : relative) {
    if (part == "..") return false;
  }
  return true;
}

// Whether a link at `link` (relative to the tree) to `target` points inside the tree.
bool LinkStaysInside(const fs::path& link, const std::string& target) {
  if (target.empty() || fs::path(target).is_absolute()) return false;
  const fs::path resolved = (link.parent_path() / target).lexically_normal();
  return resolved.empty() || resolved == "." || StaysInside(resolved);
}

// Every link below `root` resolves (through other links) inside it. A chain of links that
// each read as inside can still lead out (`p -> .`, then `q -> p/..`).
Status CheckLinksResolveInside(const fs::path& root, const std::string& who) {
  std::error_code ec;
  const fs::path base = fs::canonical(root, ec);
  if (ec) return Status::Internal("cannot resolve " + root.string() + ": " + ec.message());
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_symlink(ec)) continue;
    std::error_code resolve_ec;
    const fs::path resolved = fs::weakly_canonical(it->path(), resolve_ec);
    const fs::path inside = resolved.lexically_relative(base);
    if (resolve_ec || inside.empty() || !(inside == "." || StaysInside(inside))) {
      return Status::InvalidArgument(who + it->path().lexically_relative(root).string() +
                                     " is a link that resolves outside the directory" +
                                     (resolve_ec ? " (" + resolve_ec.message() + ")" : ""));
    }
  }
  if (ec) return Status::Internal("cannot read " + root.string() + ": " + ec.message());
  return Status::Ok();
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a file, directory or link";
}

Status ArchiveError(struct archive* a, const std::string& what) {
  const char* why = archive_error_string(a);
  return Status::Internal(what + ": " + (why != nullptr ? why : "libarchive error"));
}

// Writes a regular file's contents after its header (PackDirectory: read and copied; an
// archive read in place: only where they go noted, libarchive writes zeros there).
using WriteContents = std::function<Status(struct archive* out, const fs::path& full, const struct stat& st)>;

Status WriteEntries(struct archive* out, const fs::path& dir, const std::vector<fs::path>& entries,
                    const WriteContents& contents) {
  for (const fs::path& relative : entries) {
    const fs::path full = dir / relative;
    struct stat st {};
    if (lstat(full.c_str(), &st) != 0) return ErrnoStatus("cannot read " + full.string());
    EntryPtr entry(archive_entry_new(), archive_entry_free);
    archive_entry_copy_pathname(entry.get(), relative.c_str());
    archive_entry_set_perm(entry.get(), st.st_mode & 07777 & ~(S_ISUID | S_ISGID));
    archive_entry_set_mtime(entry.get(), st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(full, ec);
      if (ec) return Status::Internal("cannot read the link " + full.string() + ": " + ec.message());
      if (!LinkStaysInside(relative, target.string())) {
        return Status::InvalidArgument(full.string() + " is a link to " + target.string() +
                                       ", outside the directory: only links within it can be sent");
      }
      archive_entry_set_filetype(entry.get(), AE_IFLNK);
      archive_entry_copy_symlink(entry.get(), target.c_str());
    } else if (S_ISDIR(st.st_mode)) {
      archive_entry_set_filetype(entry.get(), AE_IFDIR);
    } else if (S_ISREG(st.st_mode)) {
      archive_entry_set_filetype(entry.get(), AE_IFREG);
      archive_entry_set_size(entry.get(), st.st_size);
    } else {
      return Status::InvalidArgument(full.string() + " is " + KindOf(st.st_mode) +
                                     ": only files, directories and links within the directory can be sent");
    }
    if (archive_write_header(out, entry.get()) != ARCHIVE_OK) return ArchiveError(out, "packing " + full.string());
    if (S_ISREG(st.st_mode)) GRIDCAST_RETURN_IF_ERROR(contents(out, full, st));
  }
  return Status::Ok();
}

Status CopyContents(struct archive* out, const fs::path& full, const struct stat& st) {
  const int fd = open(full.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot read " + full.string());
  std::vector<char> buffer(static_cast<size_t>(std::min<int64_t>(st.st_size, kCopyBytes)));
  int64_t left = st.st_size;
  Status copied = Status::Ok();
  while (left > 0 && copied.ok()) {
    const ssize_t n = read(fd, buffer.data(), static_cast<size_t>(std::min<int64_t>(left, kCopyBytes)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      copied = n == 0 ? Status::FailedPrecondition(full.string() + " shrank while it was packed")
                      : ErrnoStatus("cannot read " + full.string());
    } else if (archive_write_data(out, buffer.data(), static_cast<size_t>(n)) != n) {
      copied = ArchiveError(out, "packing " + full.string());
    } else {
      left -= n;
    }
  }
  close(fd);
  return copied;
}

// Every entry below `dir`, relative to it, sorted (the same tree gives the same archive).
Result<std::vector<fs::path>> SortedEntries(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    entries.push_back(it->path().lexically_relative(dir));
  }
  if (ec) return Status::InvalidArgument("cannot read the directory " + dir.string() + ": " + ec.message());
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The archive's format, as PackDirectory writes it. Names as their bytes: no locale decides
// what a name may hold.
Status SetArchiveFormat(struct archive* out) {
  if (archive_write_set_format_pax_restricted(out) != ARCHIVE_OK ||
      archive_write_set_options(out, "hdrcharset=BINARY") != ARCHIVE_OK) {
    return ArchiveError(out, "cannot set the archive format");
  }
  return Status::Ok();
}

// The bytes PackDirectory would write for a tree, laid out as pieces: the entries' headers
// and padding (kept here, runs of zeros as their length) and each file's contents (read from
// the file when asked for). Reads reuse one open file: one reader at a time.
class ArchiveInPlace : public ByteSource {
 public:
  ~ArchiveInPlace() override {
    if (open_fd_ >= 0) close(open_fd_);
  }

  uint64_t size() const override { return size_; }

  Status ReadAt(uint64_t offset, std::span<uint8_t> out) const override {
    if (offset > size_ || out.size() > size_ - offset) return Status::InvalidArgument("read past the end of the tree");
    if (out.empty()) return Status::Ok();
    // The piece holding `offset`: the last one starting at or before it.
    auto piece = std::upper_bound(pieces_.begin(), pieces_.end(), offset,
                                  [](uint64_t at, const Piece& p) { return at < p.at; }) -
                 1;
    for (; !out.empty(); ++piece) {
      const uint64_t into = offset - piece->at;
      const std::span<uint8_t> part = out.first(std::min<uint64_t>(out.size(), piece->length - into));
      if (piece->file == kHeader) {
        std::memcpy(part.data(), header_bytes_.data() + piece->from + into, part.size());
      } else if (piece->file == kZeros) {
        std::memset(part.data(), 0, part.size());
      } else {
        ReadFile(static_cast<size_t>(piece->file), piece->from + into, part);
      }
      offset += part.size();
      out = out.subspan(part.size());
    }
    return Status::Ok();
  }

  ArchiveInPlace() = default;
  ArchiveInPlace(const ArchiveInPlace&) = delete;
  ArchiveInPlace& operator=(const ArchiveInPlace&) = delete;

  // A regular file's contents start at `at` (called before libarchive writes them).
  void AddFile(const fs::path& path, const struct stat& st, uint64_t at) {
    if (st.st_size == 0) return;
    files_.push_back({path, at, static_cast<uint64_t>(st.st_size), st.st_dev, st.st_ino});
  }

  // Whether what libarchive wrote is what was laid out: every file's contents reached, in
  // order, and the length it counted.
  bool Complete(uint64_t written) const { return next_file_ == files_.size() && size_ == written; }

  // What libarchive wrote next: header bytes, or zeros standing for the next file's contents.
  void Append(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      if (next_file_ < files_.size() && size_ >= files_[next_file_].at) {
        const FileAt& file = files_[next_file_];
        const uint64_t into = size_ - file.at;
        const uint64_t n = std::min<uint64_t>(bytes.size(), file.bytes - into);
        AddPiece(static_cast<int64_t>(next_file_), into, n);
        if (into + n == file.bytes) ++next_file_;
        bytes = bytes.subspan(n);
        continue;
      }
      const uint64_t until = next_file_ < files_.size() ? files_[next_file_].at - size_ : bytes.size();
      AppendHeader(bytes.first(std::min<uint64_t>(bytes.size(), until)));
      bytes = bytes.subspan(std::min<uint64_t>(bytes.size(), until));
    }
  }

 private:
  static constexpr int64_t kHeader = -1;
  static constexpr int64_t kZeros = -2;
  static constexpr size_t kZeroRun = 64;  // shorter runs of zeros are kept as bytes

  struct Piece {
    uint64_t at;      // offset in the archive
    uint64_t length;
    int64_t file;     // index into files_, or kHeader / kZeros
    uint64_t from;    // offset in header_bytes_ or in the file
  };
  struct FileAt {
    fs::path path;
    uint64_t at;
    uint64_t bytes;
    dev_t device;  // the file laid out, told apart from one put at its path since
    ino_t inode;
  };

  void AppendHeader(std::span<const uint8_t> bytes) {
    size_t i = 0;
    while (i < bytes.size()) {
      const size_t zeros_from = static_cast<size_t>(std::find(bytes.begin() + static_cast<ptrdiff_t>(i), bytes.end(), 0) - bytes.begin());
      size_t zeros_to = zeros_from;
      while (zeros_to < bytes.size() && bytes[zeros_to] == 0) ++zeros_to;
      const bool run = zeros_to - zeros_from >= kZeroRun || (zeros_to == bytes.size() && zeros_to > zeros_from);
      const size_t literal_end = run ? zeros_from : zeros_to;
      if (literal_end > i) {
        AddPiece(kHeader, header_bytes_.size(), literal_end - i);
        header_bytes_.insert(header_bytes_.end(), bytes.begin() + static_cast<ptrdiff_t>(i),
                             bytes.begin() + static_cast<ptrdiff_t>(literal_end));
      }
      if (run) AddPiece(kZeros, 0, zeros_to - zeros_from);
      i = zeros_to;
    }
  }

  // Extends the last piece where this one continues it.
  void AddPiece(int64_t file, uint64_t from, uint64_t length) {
    if (length == 0) return;
    if (!pieces_.empty()) {
      Piece& last = pieces_.back();
      if (last.file == file && (file == kZeros || last.from + last.length == from)) {
        last.length += length;
        size_ += length;
        return;
      }
    }
    pieces_.push_back({size_, length, file, from});
    size_ += length;
  }

  // The file as laid out (the same inode, a regular file) or, where it is gone, replaced or
  // shorter now, zeros: the reader verifies every chunk, so those bytes just match nothing. A
  // FIFO planted meanwhile cannot block the open.
  void ReadFile(size_t file, uint64_t offset, std::span<uint8_t> out) const {
    if (open_file_ != file) {
      if (open_fd_ >= 0) close(open_fd_);
      open_file_ = file;
      open_fd_ = open(files_[file].path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      struct stat st {};
      if (open_fd_ >= 0 && (fstat(open_fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != files_[file].device ||
                            st.st_ino != files_[file].inode)) {
        close(open_fd_);
        open_fd_ = -1;
      }
    }
    size_t done = 0;
    while (open_fd_ >= 0 && done < out.size()) {
      const ssize_t n = pread(open_fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    std::memset(out.data() + done, 0, out.size() - done);
  }

  std::vector<Piece> pieces_;
  std::vector<uint8_t> header_bytes_;
  std::vector<FileAt> files_;
  size_t next_file_ = 0;  // the first file whose contents have not all been appended
  uint64_t size_ = 0;
  mutable size_t open_file_ = SIZE_MAX;
  mutable int open_fd_ = -1;
};

// An entry's access (left as it is) and modification times, for utimensat.
using Times = std::array<struct timespec, 2>;
Times EntryTimes(struct archive_entry* entry) {
  return {{{0, UTIME_OMIT}, {archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)}}};
}

// A directory unpacked, its mode and time set once everything in it is: the tree then reads
// as the same archive again (ReadDirectoryAsArchive), which a re-staging member searches.
struct UnpackedDirectory {
  fs::path path;
  mode_t perm;
  Times times;
};

// Creates the directories of `relative` below `root` that do not exist yet; refuses to go
// through anything that is not a directory (a link planted by an earlier entry).
Status MakeParents(const fs::path& root, const fs::path& relative) {
  fs::path at = root;
  for (const fs::path& part : relative.parent_path()) {
    at /= part;
    struct stat st {};
    if (lstat(at.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument("the archive writes through " + at.string());
    } else if (mkdir(at.c_str(), 0700) != 0) {
      return ErrnoStatus("cannot create " + at.string());
    }
  }
  return Status::Ok();
}

// The file of the tree being replaced that an entry may leave as it is: at the same path
// (resolving inside that tree), a regular file with one link and the entry's size, mode and
// modification time. -1 when there is none.
int OpenUnchangedCandidate(const fs::path& earlier_root, const fs::path& relative, struct archive_entry* entry,
                           mode_t perm) {
  if (earlier_root.empty()) return -1;
  std::error_code ec;
  const fs::path old = earlier_root / relative;
  if (fs::is_symlink(old, ec) || !IsWithin(fs::canonical(old, ec), fs::canonical(earlier_root, ec)) || ec) return -1;
  const int fd = open(old.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
      st.st_size == archive_entry_size(entry) && (st.st_mode & 0777) == perm &&
      st.st_mtim.tv_sec == archive_entry_mtime(entry) && st.st_mtim.tv_nsec == archive_entry_mtime_nsec(entry)) {
    return fd;
  }
  if (fd >= 0) close(fd);
  return -1;
}

// A regular file's entry, written to `out`; or, where the tree being replaced holds it
// unchanged (OpenUnchangedCandidate, and its bytes compare equal to the entry's as they are
// read), linked from there: re-staging a tree then rewrites only the files that changed. A
// difference found part-way copies the equal part from the old file and writes the rest.
Status ExtractRegularFile(struct archive* in, struct archive_entry* entry, const fs::path& out,
                          const fs::path& relative, mode_t perm, const fs::path& earlier_root) {
  int old_fd = OpenUnchangedCandidate(earlier_root, relative, entry, perm);
  uint64_t same_until = 0;  // old_fd >= 0: the entry's bytes so far equal the old file's
  int fd = -1;
  auto create = [&]() -> Status {
    fd = open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return ErrnoStatus("cannot create " + out.string());
    // The part of the earlier file equal to the entry's, read before a difference was found.
    return old_fd >= 0 ? CopyFileRange(old_fd, 0, fd, same_until).WithContext(out.string()) : Status::Ok();
  };
  Status written = old_fd >= 0 ? Status::Ok() : create();
  std::vector<uint8_t> old_bytes;
  while (written.ok()) {
    const void* block = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    const int r = archive_read_data_block(in, &block, &size, &offset);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) {
      written = ArchiveError(in, "unpacking " + relative.string());
      break;
    }
    const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(block), size);
    if (fd < 0) {
      old_bytes.resize(size);
      const bool same = static_cast<uint64_t>(offset) == same_until &&
                        PreadFull(SystemFileIo(), old_fd, old_bytes, same_until).ok() &&
                        std::equal(bytes.begin(), bytes.end(), old_bytes.begin());
      if (same) {
        same_until += size;
        continue;
      }
      written = create();
      if (!written.ok()) break;
    }
    written = PwriteFull(SystemFileIo(), fd, bytes, static_cast<uint64_t>(offset)).WithContext(out.string());
  }
  if (written.ok() && fd < 0) {
    // Every byte equal: the new tree takes the old file's inode (through /proc, so exactly the
    // file compared); where linking fails (another file system), a copy of it.
    const std::string opened = "/proc/self/fd/" + std::to_string(old_fd);
    if (linkat(AT_FDCWD, opened.c_str(), AT_FDCWD, out.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      close(old_fd);
      return Status::Ok();
    }
    written = create();
  }
  if (old_fd >= 0) close(old_fd);
  if (written.ok() && ftruncate(fd, archive_entry_size(entry)) != 0) written = ErrnoStatus("writing " + out.string());
  if (written.ok()) (void)futimens(fd, EntryTimes(entry).data());
  if (written.ok() && fchmod(fd, perm) != 0) written = ErrnoStatus("writing " + out.string());
  if (fd >= 0) close(fd);
  return written;
}

Status ExtractEntry(struct archive* in, struct archive_entry* entry, const fs::path& scratch,
                    const fs::path& earlier_root, std::vector<UnpackedDirectory>* directories) {
  const char* name = archive_entry_pathname(entry);
  const fs::path relative = fs::path(name != nullptr ? name : "").lexically_normal();
  if (!StaysInside(relative) || relative == ".") {
    return Status::InvalidArgument("the archive names '" + std::string(name != nullptr ? name : "") +
                                   "', outside the directory");
  }
  if (archive_entry_hardlink(entry) != nullptr) {
    return Status::InvalidArgument("the archive holds a hard link (" + relative.string() + ")");
  }
  GRIDCAST_RETURN_IF_ERROR(MakeParents(scratch, relative));
  const fs::path out = scratch / relative;
  const mode_t perm = archive_entry_perm(entry) & 0777;
  switch (archive_entry_filetype(entry)) {
    case AE_IFDIR: {
      struct stat st {};
      if (lstat(out.c_str(), &st) != 0 && mkdir(out.c_str(), 0700) != 0) {
        return ErrnoStatus("cannot create " + out.string());
      }
      if (lstat(out.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return Status::InvalidArgument("the archive makes " + relative.string() + " twice");
      }
      // Mode and time last: a read-only one still gets its files, and its time is the archive's.
      // A directory keeps its sticky bit (who may remove what in it), as PackDirectory packs it.
      directories->push_back({out, static_cast<mode_t>(perm | (archive_entry_perm(entry) & S_ISVTX)), EntryTimes(entry)});
      return Status::Ok();
    }
    case AE_IFLNK: {
      const char* target = archive_entry_symlink(entry);
      if (target == nullptr || !LinkStaysInside(relative, target)) {
        return Status::InvalidArgument("the archive holds a link out of the directory (" + relative.string() + ")");
      }
      if (symlink(target, out.c_str()) != 0) return ErrnoStatus("cannot create the link " + out.string());
      const Times times = EntryTimes(entry);
      (void)utimensat(AT_FDCWD, out.c_str(), times.data(), AT_SYMLINK_NOFOLLOW);
      return Status::Ok();
    }
    case AE_IFREG:
      return ExtractRegularFile(in, entry, out, relative, perm, earlier_root);
    default:
      return Status::InvalidArgument("the archive holds " + relative.string() +
                                     ", which is not a file, directory or link");
  }
}

}  // namespace

Result<std::string> DirectoryOfArchive(const std::string& archive_name) {
  const std::string suffix = kDirectoryArchiveSuffix;
  const std::string directory =
      archive_name.ends_with(suffix) ? archive_name.substr(0, archive_name.size() - suffix.size()) : "";
  if (directory.empty() || !CheckPayloadName(directory).ok()) {
    return Status::InvalidArgument("a directory payload is named DIR.tar, not '" + archive_name + "'");
  }
  return directory;
}

Status ReplaceDirectory(const fs::path& scratch, const fs::path& target, bool sync) {
  std::error_code ec;
  // One rename puts the new tree in place; an older one lands in `scratch` and goes.
  const bool existed = fs::exists(fs::symlink_status(target, ec));
  const int renamed = existed ? renameat2(AT_FDCWD, scratch.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE)
                              : rename(scratch.c_str(), target.c_str());
  if (renamed != 0) {
    const Status failed = ErrnoStatus("cannot move it to " + target.string());
    fs::remove_all(scratch, ec);
    return failed;
  }
  if (sync) {
    const int fd = open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = fd >= 0 && syncfs(fd) == 0;
    if (fd >= 0) close(fd);
    if (!synced) return ErrnoStatus("sync");
  }
  if (existed) fs::remove_all(scratch, ec);
  return Status::Ok();
}

Status UnpackDirectoryPayload(const std::string& data_dir, const std::string& archive_name, const std::string& tag,
                              bool sync) {
  GRIDCAST_ASSIGN_OR_RETURN(const std::string directory, DirectoryOfArchive(archive_name));
  const fs::path root(data_dir);
  const fs::path archive = root / archive_name;
  const fs::path target = root / directory;
  const fs::path scratch = root / ".gridcast" / ("unpacking-" + tag);
  std::error_code ec;
  const fs::path earlier = fs::is_directory(fs::symlink_status(target, ec)) ? target : fs::path();
  GRIDCAST_RETURN_IF_ERROR(UnpackDirectory(archive, scratch, earlier).WithContext("unpacking " + archive_name));
  GRIDCAST_RETURN_IF_ERROR(ReplaceDirectory(scratch, target, sync).WithContext("unpacking " + archive_name));
  fs::remove(archive, ec);
  fs::remove(PayloadStatePath(data_dir, archive_name, ".chunks"), ec);
  return Status::Ok();
}

Status PackDirectory(const fs::path& dir, const fs::path& archive) {
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<fs::path> entries, SortedEntries(dir));
  ArchivePtr out(archive_write_new(), archive_write_free);
  GRIDCAST_RETURN_IF_ERROR(SetArchiveFormat(out.get()));
  if (archive_write_open_filename(out.get(), archive.c_str()) != ARCHIVE_OK) {
    return ArchiveError(out.get(), "cannot create " + archive.string());
  }
  // Links as written first (WriteEntries), for the clearer message; then as they resolve.
  Status packed = WriteEntries(out.get(), dir, entries, CopyContents);
  if (packed.ok()) packed = CheckLinksResolveInside(dir, (dir / "").string());
  if (packed.ok() && archive_write_close(out.get()) != ARCHIVE_OK) packed = ArchiveError(out.get(), "packing");
  std::error_code ec;
  if (!packed.ok()) fs::remove(archive, ec);
  return packed;
}

Result<std::unique_ptr<ByteSource>> ReadDirectoryAsArchive(const fs::path& dir) {
  GRIDCAST_ASSIGN_OR_RETURN(const std::vector<fs::path> entries, SortedEntries(dir));
  auto layout = std::make_unique<ArchiveInPlace>();
  ArchivePtr out(archive_write_new(), archive_write_free);
  GRIDCAST_RETURN_IF_ERROR(SetArchiveFormat(out.get()));
  // As written to a regular file: the last block is not padded (archive_write_open_filename).
  archive_write_set_bytes_in_last_block(out.get(), 1);
  auto append = [](struct archive*, void* into, const void* bytes, size_t n) -> la_ssize_t {
    static_cast<ArchiveInPlace*>(into)->Append({static_cast<const uint8_t*>(bytes), n});
    return static_cast<la_ssize_t>(n);
  };
  if (archive_write_open2(out.get(), layout.get(), nullptr, append, nullptr, nullptr) != ARCHIVE_OK) {
    return ArchiveError(out.get(), "reading " + dir.string());
  }
  // Where a file's contents go: the archive's length so far (filter 0 counts what the format
  // wrote, before blocking); libarchive writes zeros there when the entry is finished.
  Status laid = WriteEntries(out.get(), dir, entries, [&](struct archive* a, const fs::path& full, const struct stat& st) {
    layout->AddFile(full, st, static_cast<uint64_t>(archive_filter_bytes(a, 0)));
    return Status::Ok();
  });
  if (laid.ok() && archive_write_close(out.get()) != ARCHIVE_OK) laid = ArchiveError(out.get(), "reading " + dir.string());
  GRIDCAST_RETURN_IF_ERROR(laid);
  if (!layout->Complete(static_cast<uint64_t>(archive_filter_bytes(out.get(), 0)))) {
    return Status::Internal("reading " + dir.string() + " as an archive: libarchive wrote it in another order");
  }
  return std::unique_ptr<ByteSource>(std::move(layout));
}

Status UnpackDirectory(const fs::path& archive, const fs::path& scratch, const fs::path& earlier) {
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (ec || !fs::create_directory(scratch, ec)) {
    return Status::Internal("cannot create " + scratch.string() + ": " + (ec ? ec.message() : "it is still there"));
  }
  ArchivePtr in(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(in.get());
  Status unpacked = Status::Ok();
  if (archive_read_open_filename(in.get(), archive.c_str(), kCopyBytes) != ARCHIVE_OK) {
    unpacked = ArchiveError(in.get(), "cannot read " + archive.string());
  }
  std::vector<UnpackedDirectory> directories;
  while (unpacked.ok()) {
    struct archive_entry* entry = nullptr;
    const int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) {
      unpacked = ArchiveError(in.get(), "reading " + archive.string());
      break;
    }
    unpacked = ExtractEntry(in.get(), entry, scratch, earlier, &directories);
  }
  for (auto it = directories.rbegin(); unpacked.ok() && it != directories.rend(); ++it) {
    if (chmod(it->path.c_str(), it->perm) != 0) unpacked = ErrnoStatus("cannot set the mode of " + it->path.string());
    (void)utimensat(AT_FDCWD, it->path.c_str(), it->times.data(), AT_SYMLINK_NOFOLLOW);
  }
  if (unpacked.ok()) unpacked = CheckLinksResolveInside(scratch, "the archive's ");
  if (!unpacked.ok()) fs::remove_all(scratch, ec);
  return unpacked;
}

}  // namespace gridcast
