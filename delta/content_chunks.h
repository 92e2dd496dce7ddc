// Content-defined chunk boundaries (FastCDC: Xia et al., USENIX ATC 2016): a gear hash rolled
// over the bytes cuts a chunk where its low bits are zero, so a boundary depends only on the
// bytes just before it, and an insertion moves the boundaries near it and no others. Cut points
// are normalized: a stricter mask before the average size and a looser one after keep sizes
// close to it; min and max bound them. A value type; thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "delta/byte_source.h"
#include "include/gridcast/result.h"

namespace gridcast {

class ContentCutter {
 public:
  // REQUIRES: 64 <= min_bytes < average_bytes < max_bytes, average_bytes a power of two.
  ContentCutter(uint64_t min_bytes, uint64_t average_bytes, uint64_t max_bytes);

  // The length of the chunk that starts at data[0]; data holds at least max_bytes() bytes or
  // all that is left.
  uint64_t NextCut(std::span<const uint8_t> data) const;

  // The chunk sizes of all of `source`, in order.
  Result<std::vector<uint64_t>> Cut(const ByteSource& source) const;

  uint64_t max_bytes() const { return max_; }

 private:
  uint64_t min_;
  uint64_t average_;
  uint64_t max_;
  uint64_t strict_mask_;
  uint64_t loose_mask_;
};

}  // namespace gridcast
