#include "common/chunk_bits.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gridcast {
namespace {

uint64_t WordsFor(uint64_t bits) { return (bits + 63) / 64; }

// An unlinked file in `dir` (O_TMPFILE where the file system has it), or -1.
int UnnamedFileIn(const std::string& dir) {
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR)) return fd;
  std::string name = dir + "/.bits-XXXXXX";
  fd = mkostemp(name.data(), O_CLOEXEC);
  if (fd >= 0) unlink(name.c_str());
  return fd;
}

}  // namespace

ChunkBits::ChunkBits(uint64_t count, bool value, std::string spill_dir, uint64_t in_memory_bits)
    : count_(count), uniform_(value), spill_dir_(std::move(spill_dir)), in_memory_bits_(in_memory_bits) {}

ChunkBits::~ChunkBits() { Release(); }

ChunkBits::ChunkBits(ChunkBits&& other) noexcept { *this = std::move(other); }

ChunkBits& ChunkBits::operator=(ChunkBits&& other) noexcept {
  if (this == &other) return *this;
  Release();
  count_ = std::exchange(other.count_, 0);
  uniform_ = other.uniform_;
  words_ = std::exchange(other.words_, nullptr);
  mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  spill_dir_ = std::move(other.spill_dir_);
  in_memory_bits_ = other.in_memory_bits_;
  return *this;
}

void ChunkBits::Release() {
  if (words_ == nullptr) return;
  if (mapped_bytes_ > 0) {
    munmap(words_, mapped_bytes_);
  } else {
    delete[] words_;
  }
  words_ = nullptr;
  mapped_bytes_ = 0;
}

bool ChunkBits::MapSpillFile(size_t bytes) {
  const int fd = UnnamedFileIn(spill_dir_);
  if (fd < 0) return false;
  void* mapping = MAP_FAILED;
  if (fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0) {
    mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);  // the mapping keeps the file
  if (mapping == MAP_FAILED) return false;
  words_ = static_cast<uint64_t*>(mapping);
  mapped_bytes_ = bytes;
  return true;
}

void ChunkBits::Materialize() {
  const uint64_t words = WordsFor(count_);
  const size_t bytes = static_cast<size_t>(words * sizeof(uint64_t));
  // A fresh file reads as zeros: only bits that start set are written.
  const bool in_file = count_ > in_memory_bits_ && !spill_dir_.empty() && MapSpillFile(bytes);
  if (!in_file) words_ = new uint64_t[words]();
  if (uniform_) std::memset(words_, 0xff, bytes);
}

void ChunkBits::Set(uint64_t i, bool value) {
  if (words_ == nullptr) {
    if (value == uniform_) return;
    Materialize();
  }
  const uint64_t mask = uint64_t{1} << (i % 64);
  if (value) {
    words_[i / 64] |= mask;
  } else {
    words_[i / 64] &= ~mask;
  }
}

uint64_t ChunkBits::Find(bool value, uint64_t from) const {
  if (from >= count_) return count_;
  if (words_ == nullptr) return value == uniform_ ? from : count_;
  const uint64_t flip = value ? 0 : ~uint64_t{0};
  uint64_t w = from / 64;
  // Bits below `from` in its word are masked off; a set bit of `word` is a bit equal to `value`.
  uint64_t word = (words_[w] ^ flip) & (~uint64_t{0} << (from % 64));
  const uint64_t words = WordsFor(count_);
  while (word == 0) {
    if (++w == words) return count_;
    word = words_[w] ^ flip;
  }
  return std::min(count_, w * 64 + static_cast<uint64_t>(std::countr_zero(word)));
}

void ChunkBits::OrBytes(uint64_t first, std::span<const uint8_t> bytes) {
  if (words_ == nullptr && uniform_) return;
  for (size_t k = 0; k < bytes.size() && first + 8 * k < count_; ++k) {
    if (bytes[k] == 0) continue;
    if (words_ == nullptr) Materialize();
    const uint64_t bit = first + 8 * k;
    uint64_t byte = bytes[k];
    // Bits past the last chunk are not the bitmap's.
    if (count_ - bit < 8) byte &= (uint64_t{1} << (count_ - bit)) - 1;
    words_[bit / 64] |= byte << (bit % 64);
  }
}

}  // namespace gridcast
