// PieceAssembly: the blocks of the pieces a swarm member is downloading, gathered in memory
// until each piece is whole.
//
// Why: libtorrent hands its disk subsystem one 16 KiB block at a time. Written to the payload
// file as they came, a 256 KiB piece cost 16 pwrites and, once complete, a read of the whole
// piece back for its SHA-256 check. Gathered here, a piece is hashed from memory and written
// once, and only if it is good (PayloadStore::WriteChunk), as the push path does.
//
// Memory is bounded: a piece whose first block arrives while `budget_bytes` are already taken
// (by pieces being gathered or checked) is not gathered: Add() returns false for its blocks
// until Drop(), and the caller writes them to the store as unverified bytes instead. A taken
// piece's buffer counts against the budget until its last holder lets it go.
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "common/buffer_pool.h"

namespace gridcast {

class PieceAssembly {
 public:
  // Pieces of several torrents share one budget; `storage` tells the torrents apart.
  using Key = std::pair<int, uint64_t>;  // storage, piece

  explicit PieceAssembly(uint64_t budget_bytes);

  // Copies `block` to `offset` of the piece (of `piece_bytes` bytes) and returns true, or
  // returns false when the piece is not gathered here (see above). REQUIRES: the block lies
  // inside the piece.
  bool Add(const Key& key, uint64_t piece_bytes, uint64_t offset, std::span<const uint8_t> block);

  // The gathered piece, handed over for its check (nullptr when the piece is not gathered);
  // forgets the piece either way.
  std::shared_ptr<const std::vector<uint8_t>> Take(const Key& key);

  // Forgets the piece (its blocks are to be downloaded again) or every piece of a storage.
  void Drop(const Key& key);
  void DropStorage(int storage);

  uint64_t used_bytes() const { return used_->load(); }

 private:
  const uint64_t budget_bytes_;
  const std::shared_ptr<BufferPool> pool_;
  // Shared with the deleters of taken buffers, which may outlive this object.
  const std::shared_ptr<std::atomic<uint64_t>> used_;
  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<std::vector<uint8_t>>> gathering_;  // guarded by mutex_
  std::set<Key> elsewhere_;  // pieces whose blocks go to the store; guarded by mutex_
};

}  // namespace gridcast
