// Cryptography on OpenSSL: SHA-256 (chunk and payload digests), HMAC-SHA256 with the cluster
// secret, random nonces and secrets, constant-time comparison.
//
// The secret never travels: control calls carry an HMAC over a timestamp and nonce, data
// connections run a mutual challenge-response (daemon/transport/handshake.h). Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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

}  // namespace gridcast
