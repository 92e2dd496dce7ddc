// Big-endian integers in byte buffers: how gridcast's own binary formats (data-plane frames,
// chunk lists and resume state, the rank-memory protocol, signed digest batches) write their
// numbers. Pure; thread-safe.
#pragma once

#include <cstdint>

namespace gridcast {

// The low `bytes` bytes of `value` at out[0..bytes), most significant first.
inline void StoreBigEndian(uint8_t* out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i, value >>= 8) out[i] = static_cast<uint8_t>(value);
}

// The `bytes`-byte number at in[0..bytes), most significant first.
inline uint64_t LoadBigEndian(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

}  // namespace gridcast
