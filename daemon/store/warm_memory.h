// WarmMemory: the pages of in-memory payloads this daemon removed, kept for the next one.
//
// A tmpfs page is zeroed when a file first takes it, and on a host whose memory is backed
// lazily (a VM with free page reporting, as many cloud hosts are) a page the guest never held
// also costs the host a fault: 3.1 CPU-s per GiB here, against 0.23 to map a page a file
// still holds (docs/performance.md). A removed payload's file is therefore not unlinked but
// renamed into a directory of spare files, and the next in-memory payload takes one as its
// ".part": its bytes land in pages that are held already. A spare is handed out only once
// nobody has it open or mapped any more (a write lease tells): whoever still read the removed
// payload (a member forwarding it to its children, a process copying it out) reads it
// unchanged to the end, as after an unlink. A spare holds stale bytes, which are never
// trusted (a receiver verifies every chunk it holds). At most `limit_bytes` are kept, and what
// lies unused for the idle time goes. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

class WarmMemory {
 public:
  using Clock = std::chrono::steady_clock;

  // `dir`: a directory on the memory directory's file system (made if missing, emptied of what
  // an earlier run kept); spare files are renamed between it and their payloads.
  static Result<std::unique_ptr<WarmMemory>> Open(const std::string& dir, uint64_t limit_bytes,
                                                  std::chrono::seconds idle);
  ~WarmMemory();  // lets every spare go
  WarmMemory(const WarmMemory&) = delete;
  WarmMemory& operator=(const WarmMemory&) = delete;

  // Removes `name` (in the directory `dir_fd`) by keeping it as a spare, when it is a regular
  // file of one link whose pages fit under the limit (older spares go to make room). False
  // when it was not kept: then the caller removes it as it would have.
  bool Keep(int dir_fd, const std::string& name);

  // Renames a spare nobody reads any more to `name` in `dir_fd` (which must not exist): the
  // one holding the most pages up to `bytes`, else the smallest larger one. False when there
  // is none.
  bool Take(int dir_fd, const std::string& name, uint64_t bytes);

  // Lets go of the spares kept unused for longer than the idle time, as of `now`.
  void ReleaseIdle(Clock::time_point now = Clock::now());

  uint64_t held_bytes() const;
  size_t spares() const;

 private:
  struct Spare {
    std::string file;  // in dir_fd_
    uint64_t held_bytes;
    Clock::time_point kept_at;
  };

  WarmMemory(int dir_fd, uint64_t limit_bytes, std::chrono::seconds idle)
      : dir_fd_(dir_fd), limit_bytes_(limit_bytes), idle_(idle) {}
  // Unlinks spares_[i]; mutex_ held.
  void Drop(size_t i);

  const int dir_fd_;
  const uint64_t limit_bytes_;
  const std::chrono::seconds idle_;
  mutable std::mutex mutex_;
  std::vector<Spare> spares_;  // guarded by mutex_, oldest first
  uint64_t held_bytes_ = 0;    // guarded by mutex_
  uint64_t next_file_ = 0;     // guarded by mutex_
};

}  // namespace gridcast
