// RankMemory: where a payload received "into registered memory" goes: the receive buffers that
// processes of this host (the MPI shim's ranks) lent the daemon (daemon/store/rank_memory_registry.h),
// instead of a file in the memory directory that each rank would copy out of.
//
// Why: a copy in the daemon's memory directory costs a node fresh memory for the whole payload
// (0.3-3.5 CPU-seconds per GiB on the test host, docs/performance.md) and a second copy into the
// rank; the rank's buffer is already there. Each verified chunk is written into every lent
// buffer with process_vm_writev (one copy, as MPI's own pipeline makes), and this member's
// children are sent the chunk from the buffer it was received in, kept until it has gone to
// every child (or, past a bound, read back from the first lent buffer).
//
// Thread-safety: all of it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <vector>

#include "common/buffer_pool.h"
#include "common/chunk_ref.h"
#include "include/gridcast/result.h"

namespace gridcast {

// `length` bytes at `address` in the memory of process `pid`, lent to this daemon.
class ProcessRegion {
 public:
  ProcessRegion(pid_t pid, uint64_t address, uint64_t length) : pid_(pid), address_(address), length_(length) {}

  pid_t pid() const { return pid_; }
  uint64_t length() const { return length_; }

  // Whether this daemon may read and write the region (PermissionDenied naming what allows it:
  // the same user as the process, or CAP_SYS_PTRACE); reads its first and last byte and
  // writes the first one back.
  Status Probe();
  // OutOfRange outside the region; FailedPrecondition once Close()d.
  Status Write(uint64_t offset, std::span<const uint8_t> bytes);
  Status Read(uint64_t offset, std::span<uint8_t> out) const;
  // No write starts after this returns, and none is in progress: the owner may use its memory
  // again. Idempotent.
  void Close();

  // Bytes written (each chunk is written once): all of them means the payload is there.
  uint64_t written() const { return written_.load(); }
  bool filled() const { return written() == length_; }

 private:
  Status Transfer(uint64_t offset, uint8_t* local, uint64_t bytes, bool write) const;

  const pid_t pid_;
  const uint64_t address_;
  const uint64_t length_;
  mutable std::shared_mutex mutex_;  // writes hold it shared, Close() exclusively
  bool closed_ = false;              // guarded by mutex_
  std::atomic<uint64_t> written_{0};
};

class RankMemory {
 public:
  // Received (or read-back) buffers kept to forward from: a few windows of every lane. A send
  // whose chunk is no longer kept reads it back from the lent memory (one more copy).
  static constexpr uint64_t kKeptBytes = uint64_t{64} << 20;

  // `kept_bytes` bounds the received buffers kept for forwarding.
  RankMemory(std::vector<std::shared_ptr<ProcessRegion>> regions, uint64_t kept_bytes);
  ~RankMemory();  // logs how the sends went

  // Writes a verified chunk's bytes at `offset` into every region, and keeps `buffer` (the
  // memory `bytes` lies in, when given) to send the chunk from.
  Status Write(uint64_t chunk, uint64_t offset, std::span<const uint8_t> bytes,
               std::shared_ptr<const std::vector<uint8_t>> buffer);
  // Where chunk's bytes are for sending: the buffer kept, else read back from the first region
  // into a new one (kept in turn, for the other children). The ChunkRef owns what it points
  // to. REQUIRES: the chunk was written, or the regions hold the payload (a lent source).
  Result<ChunkRef> At(uint64_t chunk, uint64_t offset, uint64_t length);
  // The chunk went to every child: its buffer is no longer kept.
  void Forwarded(uint64_t chunk);

  size_t regions() const { return regions_.size(); }
  // Sends that found their chunk's buffer kept, and those that read it back.
  uint64_t sent_from_kept() const;
  uint64_t sent_read_back() const;

 private:
  // Keeps `buffer` to send `chunk` from, within kept_bytes_.
  void Keep(uint64_t chunk, std::shared_ptr<const std::vector<uint8_t>> buffer);

  const std::vector<std::shared_ptr<ProcessRegion>> regions_;
  const uint64_t kept_bytes_;
  // Read-backs reuse buffers: fresh ones cost the kernel a page clearing per 4 KiB.
  const std::shared_ptr<BufferPool> read_back_ = BufferPool::Create(16);
  mutable std::mutex mutex_;  // guards the members below
  std::map<uint64_t, std::shared_ptr<const std::vector<uint8_t>>> kept_;
  std::deque<uint64_t> kept_order_;  // oldest first; may name chunks no longer kept
  uint64_t kept_total_ = 0;
  uint64_t sent_from_kept_ = 0;
  uint64_t sent_read_back_ = 0;
};

}  // namespace gridcast
