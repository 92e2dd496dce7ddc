// Hexadecimal text for bytes (digests, plan ids, secrets in files) and back.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "include/gridcast/result.h"

namespace gridcast {

std::string ToHex(std::span<const uint8_t> bytes);
// InvalidArgument unless text is an even-length hex string.
Result<std::string> FromHex(std::string_view text);
// The bytes of exactly 2 * `bytes` hex digits (a digest); InvalidArgument("expected 64 hex
// digits") otherwise.
Result<std::string> FromHexOfSize(std::string_view text, size_t bytes);

inline std::span<const uint8_t> AsBytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}
// The inverse: bytes (a digest, a plan id) as a protobuf `bytes` field holds them.
inline std::string AsString(std::span<const uint8_t> bytes) { return std::string(bytes.begin(), bytes.end()); }

}  // namespace gridcast
