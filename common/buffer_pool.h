// BufferPool: chunk-sized byte buffers that are reused instead of allocated per chunk.
//
// A fresh multi-megabyte std::vector per received chunk costs a zero fill and, because glibc
// serves such sizes with mmap, page faults on every first touch: measured as a third of a
// receiving daemon's CPU time (memset 16%, page-fault and VM-exit work 15%) on loopback.
// Buffers come back to the pool when their last shared_ptr goes (the forwarding cache and the
// senders hold them); the pool keeps at most `max_idle` idle ones, so memory stays bounded by
// what is in use (windows and cache) plus that many.
// Thread-safe; buffers may be released on any thread, also after the pool's owner is gone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gridcast {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static std::shared_ptr<BufferPool> Create(size_t max_idle) {
    return std::shared_ptr<BufferPool>(new BufferPool(max_idle));
  }

  // A buffer of exactly `bytes` bytes; its contents are unspecified (whatever the previous
  // user left), so the caller overwrites all of it.
  std::shared_ptr<std::vector<uint8_t>> Acquire(size_t bytes);

  size_t idle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_.size();
  }

 private:
  explicit BufferPool(size_t max_idle) : max_idle_(max_idle) {}

  void Release(std::unique_ptr<std::vector<uint8_t>> buffer);

  const size_t max_idle_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> idle_;  // guarded by mutex_
};

}  // namespace gridcast
