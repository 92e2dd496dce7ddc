// The weak checksum rsync rolls over a file (Tridgell's thesis, 1999): two 16-bit sums of a
// window, a = sum of its bytes and b = sum of a's prefix sums, that move one byte along in
// O(1). Cheap enough to test a window at every offset of an old copy; only a window whose weak
// checksum matches a chunk's is hashed with the chunk digest. A value type; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

class RollingChecksum {
 public:
  // The checksum of `window` (its length is the window's from then on).
  explicit RollingChecksum(std::span<const uint8_t> window);

  // Moves the window one byte: `out` leaves at the front, `in` enters at the back.
  void Roll(uint8_t out, uint8_t in) {
    a_ += in - out;
    b_ += a_ - length_ * out;
  }

  uint32_t value() const { return (a_ & 0xffff) | (b_ << 16); }

 private:
  uint32_t a_ = 0;
  uint32_t b_ = 0;
  uint32_t length_ = 0;
};

// RollingChecksum(bytes).value().
uint32_t WeakChecksum(std::span<const uint8_t> bytes);

// Weak checksums as a plan carries them (Payload.weak_checksums): 4 bytes little-endian each.
// Decoding takes none or one per chunk (InvalidArgument otherwise).
std::string EncodeWeakChecksums(const std::vector<uint32_t>& weak_checksums);
Result<std::vector<uint32_t>> DecodeWeakChecksums(std::string_view encoded, uint64_t chunks);

}  // namespace gridcast
