// Ids that cross the daemon's layers, each a type of its own (as libtorrent's strong_typedef
// keeps piece and file indexes apart): a plan's id travels in control messages, in every
// frame header and in the logs; a serve's in Status and Cancel. Both are 16 random bytes.
// Values; thread-compatible. Random() needs gridcast_crypto.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "common/crypto.h"
#include "common/hex.h"
#include "include/gridcast/result.h"

namespace gridcast {

// 16 bytes naming one thing of a kind; `Kind` keeps the kinds apart and names them in errors.
template <typename Kind>
class RandomId {
 public:
  static constexpr size_t kBytes = 16;

  constexpr RandomId() = default;  // all zero: none yet
  explicit constexpr RandomId(const std::array<uint8_t, kBytes>& bytes) : bytes_(bytes) {}

  // A fresh id, from OpenSSL's random bytes.
  static RandomId Random() {
    std::array<uint8_t, kBytes> bytes;
    RandomBytes(bytes);
    return RandomId(bytes);
  }
  // The id a message's bytes field holds; InvalidArgument unless it holds exactly 16 bytes.
  static Result<RandomId> FromBytes(std::string_view bytes) {
    if (bytes.size() != kBytes) {
      return Status::InvalidArgument(std::string(Kind::kName) + " must be " + std::to_string(kBytes) + " bytes");
    }
    std::array<uint8_t, kBytes> copy;
    std::memcpy(copy.data(), bytes.data(), kBytes);
    return RandomId(copy);
  }

  std::span<const uint8_t, kBytes> bytes() const { return bytes_; }

  friend bool operator==(const RandomId&, const RandomId&) = default;
  friend auto operator<=>(const RandomId&, const RandomId&) = default;

 private:
  std::array<uint8_t, kBytes> bytes_{};
};

// 32 lowercase hex digits, as logs, errors and `gridcast status` show an id.
template <typename Kind>
std::string ToHex(const RandomId<Kind>& id) {
  return ToHex(std::span<const uint8_t>(id.bytes()));
}

struct PlanIdKind {
  static constexpr std::string_view kName = "plan id";
};
struct ServeIdKind {
  static constexpr std::string_view kName = "serve id";
};
// One plan, the same at every member: what its control calls and data frames name.
using PlanId = RandomId<PlanIdKind>;
// One serve of a payload to a BitTorrent client (TorrentExports).
using ServeId = RandomId<ServeIdKind>;

}  // namespace gridcast
