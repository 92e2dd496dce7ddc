#include "delta/content_chunks.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "common/splitmix64.h"

namespace gridcast {
namespace {

// One pseudo-random 64-bit value per byte value, the same everywhere (a fixed seed): the
// source and every member must cut alike.
const std::array<uint64_t, 256>& Gear() {
  static const std::array<uint64_t, 256> gear = [] {
    std::array<uint64_t, 256> table{};
    SplitMix64 random(0x6772696463617374ULL);  // "gridcast"
    for (uint64_t& value : table) value = random.Next();
    return table;
  }();
  return gear;
}

// `bits` ones at the top of the word: the gear hash's top bits depend on its last 64 bytes,
// its low bits only on the last few.
uint64_t TopMask(int bits) { return bits <= 0 ? 0 : ~uint64_t{0} << (64 - bits); }

}  // namespace

ContentCutter::ContentCutter(uint64_t min_bytes, uint64_t average_bytes, uint64_t max_bytes)
    : min_(min_bytes), average_(average_bytes), max_(max_bytes) {
  assert(64 <= min_ && min_ < average_ && average_ < max_ && std::has_single_bit(average_));
  const int bits = std::countr_zero(average_);
  // FastCDC's normalization level 1: one bit stricter before the average, one looser after.
  strict_mask_ = TopMask(bits + 1);
  loose_mask_ = TopMask(bits - 1);
}

uint64_t ContentCutter::NextCut(std::span<const uint8_t> data) const {
  const uint64_t n = std::min<uint64_t>(data.size(), max_);
  if (n <= min_) return n;
  const std::array<uint64_t, 256>& gear = Gear();
  const uint64_t normal = std::min(average_, n);
  uint64_t hash = 0;
  uint64_t i = min_;
  for (; i < normal; ++i) {
    hash = (hash << 1) + gear[data[i]];
    if ((hash & strict_mask_) == 0) return i + 1;
  }
  for (; i < n; ++i) {
    hash = (hash << 1) + gear[data[i]];
    if ((hash & loose_mask_) == 0) return i + 1;
  }
  return n;
}

Result<std::vector<uint64_t>> ContentCutter::Cut(const ByteSource& source) const {
  std::vector<uint64_t> sizes;
  const uint64_t total = source.size();
  std::vector<uint8_t> buffer;
  uint64_t offset = 0;
  while (offset < total) {
    // Every chunk that starts in the buffer is cut from whole bytes: read max_ past the last
    // start we cut at.
    const uint64_t length = std::min<uint64_t>(total - offset, std::max<uint64_t>(max_, 8 << 20) + max_);
    buffer.resize(length);
    GRIDCAST_RETURN_IF_ERROR(source.ReadAt(offset, buffer));
    uint64_t at = 0;
    while (at < length && (offset + length == total || length - at >= max_)) {
      const uint64_t cut = NextCut(std::span<const uint8_t>(buffer).subspan(at));
      sizes.push_back(cut);
      at += cut;
    }
    offset += at;
  }
  return sizes;
}

}  // namespace gridcast
