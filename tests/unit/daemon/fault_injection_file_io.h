// A FileIo that fails on request, in the style of LevelDB's FaultInjectionTestEnv: errors
// (EIO, ENOSPC, ...) on the reads, writes, opens or renames of chosen files (a failed rename is
// a crash between a file's last write and its rename into place), short and interrupted
// transfers, a reservation the file system refuses, and a power loss that takes back the
// writes no Sync covered. Files are chosen by a part of their current path (so a rule on ".part" follows the
// payload being received, and one on ".state" its bitmap). Thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/file_io.h"

namespace gridcast {

class FaultInjectionFileIo final : public FileIo {
 public:
  ~FaultInjectionFileIo() override;

  // Writes (or reads) of files whose path contains `path_part` fail with `error` once `after`
  // more of them have succeeded, until ClearFaults().
  void FailWrites(const std::string& path_part, int error, int after = 0);
  void FailReads(const std::string& path_part, int error, int after = 0);
  // Opens (or renames) of paths containing `path_part` (a rename: its source) fail with
  // `error` once `after` more of them have succeeded, until ClearFaults().
  void FailOpens(const std::string& path_part, int error, int after = 0);
  void FailRenames(const std::string& path_part, int error, int after = 0);
  // Reserve() answers `error` (e.g. ENOSPC, or EOPNOTSUPP as some file systems do).
  void FailReserve(int error);
  // Every transfer moves at most a third of what was asked (at least one byte), and every
  // third call is interrupted (EINTR) before it moves anything.
  void SetShortTransfers(bool on);
  void ClearFaults();

  // A power loss: the writes to files whose path contains `path_part` since their last Sync
  // are taken back, newest first, except every `keep_one_in`-th of them (counting from the
  // oldest; 0 keeps none), as a page cache that had written some pages back and not others.
  // A lost write that overlaps a newer kept one takes that back too: more is lost, nothing
  // that never existed appears. False when a file could not be restored.
  bool LoseUnsyncedWrites(const std::string& path_part, int keep_one_in = 0);

  int failed_calls() const;

  ssize_t Pread(int fd, void* buffer, size_t bytes, off_t offset) override;
  ssize_t Pwrite(int fd, const void* buffer, size_t bytes, off_t offset) override;
  int Reserve(int fd, off_t bytes) override;
  int Sync(int fd) override;
  int OpenAt(int dir_fd, const char* path, int flags, mode_t mode) override;
  int RenameAt(int from_dir_fd, const char* from, int to_dir_fd, const char* to) override;
  int Truncate(int fd, off_t bytes) override;
  int SyncRange(int fd, off_t offset, off_t bytes, unsigned int flags) override;
  int Advise(int fd, off_t offset, off_t bytes, int advice) override;

 private:
  struct Rule {
    std::string path_part;
    int error = 0;
    int after = 0;
  };
  // What a write replaced: enough to take it back.
  struct UndoRecord {
    off_t offset = 0;
    std::vector<char> old_bytes;  // those that existed before the write
    off_t old_size = 0;
  };
  // A file written since its last Sync, by identity (it may be renamed or closed meanwhile).
  struct Written {
    int fd = -1;  // a duplicate this object owns, to take writes back after the store closed
    std::vector<UndoRecord> undo;  // oldest first
  };

  // REQUIRES: mutex_ held. The errno an injected rule fails the call with, or 0.
  int Triggered(std::vector<Rule>& rules, int fd);
  int TriggeredByPath(std::vector<Rule>& rules, const std::string& path);
  // REQUIRES: mutex_ held. Triggered(), or EINTR for an interrupted transfer, or 0.
  int FailureFor(std::vector<Rule>& rules, int fd);
  size_t Shorten(size_t bytes) const;

  mutable std::mutex mutex_;
  std::vector<Rule> write_rules_;
  std::vector<Rule> read_rules_;
  std::vector<Rule> open_rules_;
  std::vector<Rule> rename_rules_;
  int reserve_error_ = 0;
  bool short_transfers_ = false;
  int calls_ = 0;
  int failed_calls_ = 0;
  std::map<std::pair<dev_t, ino_t>, Written> written_;
};

// The path an open descriptor names now, from /proc/self/fd.
std::string PathOfDescriptor(int fd);

}  // namespace gridcast
