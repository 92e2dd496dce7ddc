// ChunkRef: where one chunk's bytes are, as a store hands them out to whatever sends them
// (Gloo's UnboundBuffer, LevelDB's Slice): a view of memory the store owns, or a range of a
// file it keeps open. Valid while the store lives, or while the ChunkRef lives where it owns
// the memory (`owner`: a buffer handed out for one send).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace gridcast {

struct ChunkRef {
  std::span<const uint8_t> memory;  // the bytes, when they are in memory
  int fd = -1;                      // else: `length` bytes of this file from `offset`
  uint64_t offset = 0;
  uint64_t length = 0;
  std::shared_ptr<const void> owner;  // keeps `memory` alive, when the store does not

  static ChunkRef InMemory(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner = nullptr) {
    return ChunkRef{bytes, -1, 0, bytes.size(), std::move(owner)};
  }
  static ChunkRef InFile(int fd, uint64_t offset, uint64_t length) { return ChunkRef{{}, fd, offset, length, nullptr}; }
  bool in_memory() const { return fd < 0; }
  uint64_t size() const { return length; }
};

}  // namespace gridcast
