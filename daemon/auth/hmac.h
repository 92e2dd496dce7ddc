// Cluster-secret cryptography: HMAC-SHA256, random nonces, constant-time comparison, SHA-256.
//
// The secret never travels: control calls carry an HMAC over a timestamp and nonce, data
// connections run a mutual challenge-response (daemon/transport/handshake.h). Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gridcast {

using Digest = std::array<uint8_t, 32>;

Digest HmacSha256(std::string_view key, std::span<const uint8_t> message);
Digest Sha256(std::span<const uint8_t> data);

// Incremental SHA-256 for payloads that do not fit in memory.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Update(std::span<const uint8_t> data);
  Digest Finish();

 private:
  void* context_;  // EVP_MD_CTX, kept out of this header
};

// Cryptographically random bytes.
void RandomBytes(std::span<uint8_t> out);
std::string RandomHex(size_t bytes);

bool ConstantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b);

std::string ToHex(std::span<const uint8_t> bytes);
// InvalidArgument unless text is an even-length hex string.
Result<std::string> FromHex(std::string_view text);

inline std::span<const uint8_t> AsBytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace gridcast
