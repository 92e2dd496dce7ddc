// RecentPieces: the pieces a swarm member verified last, kept in memory so that its peers'
// requests for them are served from the very buffer the piece arrived in.
//
// Why: a member announces a piece as soon as it verified it, and its peers ask for it within
// moments. Served from the payload file, every 16 KiB block cost a pread (a copy out of the
// page cache into a fresh buffer) before libtorrent copied it again into the socket; served
// from here, the block goes from the gathered piece to the socket. Forwarding from the buffer
// a chunk was received into is what the push path does too.
//
// A lent block keeps its piece alive until it is returned, also after the piece left the
// recent ones. Memory: `budget_bytes` of recent pieces plus what is lent and not yet sent
// (bounded by libtorrent's send buffers). Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace gridcast {

class RecentPieces {
 public:
  using Key = std::pair<int, uint64_t>;  // storage, piece
  using Piece = std::shared_ptr<const std::vector<uint8_t>>;

  explicit RecentPieces(uint64_t budget_bytes) : budget_bytes_(budget_bytes) {}

  // `piece` was verified and stored: the oldest recent pieces make room for it.
  void Add(const Key& key, Piece piece);

  // The `length` bytes at `offset` of a recent piece, lent until Return(); nullptr when the
  // piece is not recent or the range is not inside it.
  const uint8_t* Lend(const Key& key, uint64_t offset, uint64_t length);
  // False when `bytes` was not lent here.
  bool Return(const uint8_t* bytes);

  void DropStorage(int storage);

  uint64_t recent_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return recent_bytes_;
  }
  size_t lent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lent_.size();
  }

 private:
  void Remove(const Key& key);  // REQUIRES: mutex_ held

  const uint64_t budget_bytes_;
  mutable std::mutex mutex_;
  std::map<Key, Piece> pieces_;
  std::deque<Key> order_;  // oldest first
  uint64_t recent_bytes_ = 0;
  std::multimap<const uint8_t*, Piece> lent_;
};

}  // namespace gridcast
