// ChunkBits: one bit per chunk of a payload (held, claimed, a resume candidate, delivered to a
// child), the only state a member keeps per chunk. A plan may have 2^30 chunks, so a bitmap may
// weigh 128 MiB: past `in_memory_bits` bits it lives in a MAP_SHARED mapping of an unlinked file
// of a spill directory (the data directory's state directory), whose pages the kernel writes
// back and drops like any page cache, instead of anonymous memory it must keep. Up to that it is
// anonymous memory (8 MiB at the default), and bits all alike take none at all until one
// differs (a source's "every chunk held", a fresh receiver's "none yet").
//
// Not thread-safe: its owner's lock guards it, as it guarded the vector<bool> this replaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gridcast {

class ChunkBits {
 public:
  static constexpr uint64_t kInMemoryBits = uint64_t{1} << 26;

  ChunkBits() = default;
  // `count` bits, all `value`. Storage is made at the first write of the other value: in a file
  // of `spill_dir` past `in_memory_bits` bits when a directory is given and a file can be made
  // and reserved there (fallocate, so writing a page never finds the disk full), else memory.
  ChunkBits(uint64_t count, bool value, std::string spill_dir = {}, uint64_t in_memory_bits = kInMemoryBits);
  ~ChunkBits();
  ChunkBits(ChunkBits&& other) noexcept;
  ChunkBits& operator=(ChunkBits&& other) noexcept;
  ChunkBits(const ChunkBits&) = delete;
  ChunkBits& operator=(const ChunkBits&) = delete;

  uint64_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Whether the bits live in a mapped file (for tests and the figures of docs/streamed-digests.md).
  bool mapped() const { return mapped_bytes_ > 0; }

  // REQUIRES: i < size().
  bool operator[](uint64_t i) const { return words_ == nullptr ? uniform_ : ((words_[i / 64] >> (i % 64)) & 1) != 0; }
  void Set(uint64_t i, bool value = true);
  // The first bit at or after `from` that is `value`; size() when there is none.
  uint64_t Find(bool value, uint64_t from = 0) const;
  // ORs `bytes` into the bits from `first` (a multiple of 8), bit i of byte k being bit
  // first + 8k + i: the layout of the resume bitmap on disk (state_files.h).
  void OrBytes(uint64_t first, std::span<const uint8_t> bytes);

 private:
  // Makes the words, every bit `uniform_`.
  void Materialize();
  bool MapSpillFile(size_t bytes);
  void Release();

  uint64_t count_ = 0;
  bool uniform_ = false;     // every bit, while words_ is null
  uint64_t* words_ = nullptr;
  size_t mapped_bytes_ = 0;  // the mapping's length; 0 when words_ is heap memory (or null)
  std::string spill_dir_;
  uint64_t in_memory_bits_ = kInMemoryBits;
};

}  // namespace gridcast
