#include "delta/rolling_checksum.h"

namespace gridcast {

RollingChecksum::RollingChecksum(std::span<const uint8_t> window) : length_(static_cast<uint32_t>(window.size())) {
  for (uint8_t byte : window) {
    a_ += byte;
    b_ += a_;
  }
}

uint32_t WeakChecksum(std::span<const uint8_t> bytes) { return RollingChecksum(bytes).value(); }

}  // namespace gridcast
