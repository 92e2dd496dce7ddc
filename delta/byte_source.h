// ByteSource: random reads from an earlier copy of a payload (a file in a member's data
// directory, a memory buffer) for the delta library, which opens nothing itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "include/gridcast/result.h"

namespace gridcast {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Fills `out` from `offset`. REQUIRES: offset + out.size() <= size().
  virtual Status ReadAt(uint64_t offset, std::span<uint8_t> out) const = 0;
};

// Bytes in memory; they must outlive the source.
class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  Status ReadAt(uint64_t offset, std::span<uint8_t> out) const override {
    if (offset > bytes_.size() || out.size() > bytes_.size() - offset) {
      return Status::InvalidArgument("read past the end of the copy");
    }
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
    return Status::Ok();
  }

 private:
  std::span<const uint8_t> bytes_;
};

}  // namespace gridcast
