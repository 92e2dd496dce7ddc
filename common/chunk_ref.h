// ChunkRef: where one chunk's bytes are, as a store hands them out to whatever sends them
// (Gloo's UnboundBuffer, LevelDB's Slice): a view of memory the store owns, or a range of a
// file it keeps open. Either way valid while the store lives; the holder owns nothing.
#pragma once

#include <cstdint>
#include <span>

namespace gridcast {

struct ChunkRef {
  std::span<const uint8_t> memory;  // the bytes, when they are in memory
  int fd = -1;                      // else: `length` bytes of this file from `offset`
  uint64_t offset = 0;
  uint64_t length = 0;

  static ChunkRef InMemory(std::span<const uint8_t> bytes) { return ChunkRef{bytes, -1, 0, bytes.size()}; }
  static ChunkRef InFile(int fd, uint64_t offset, uint64_t length) { return ChunkRef{{}, fd, offset, length}; }
  bool in_memory() const { return fd < 0; }
  uint64_t size() const { return length; }
};

}  // namespace gridcast
