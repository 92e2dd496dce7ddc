#include "common/hex.h"

namespace gridcast {

std::string ToHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

Result<std::string> FromHex(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (text.size() % 2 != 0) return Status::InvalidArgument("odd-length hex string");
  std::string out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    int hi = value(text[i]);
    int lo = value(text[i + 1]);
    if (hi < 0 || lo < 0) return Status::InvalidArgument("not a hex string");
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

Result<std::string> FromHexOfSize(std::string_view text, size_t bytes) {
  Result<std::string> out = FromHex(text);
  if (!out.ok() || out->size() != bytes) {
    return Status::InvalidArgument("expected " + std::to_string(2 * bytes) + " hex digits");
  }
  return out;
}

}  // namespace gridcast
