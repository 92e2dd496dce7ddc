// Ed25519 signatures on OpenSSL: a source signs what it says about its payload (batches of
// chunk digests, docs/streamed-digests.md) with a key pair made for one broadcast, and every
// member checks with the public key it got at Prepare. A member that relays the batches holds
// no private key, so it cannot make one the others accept. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "include/gridcast/result.h"

namespace gridcast {

using PublicKey = std::array<uint8_t, 32>;
using Signature = std::array<uint8_t, 64>;

class SigningKey {
 public:
  // A fresh key pair (OpenSSL's random bytes); Internal only when OpenSSL fails.
  static Result<SigningKey> Generate();
  // The key pair whose private key is `seed` (RFC 8032): the same seed, the same pair. An
  // allgather's holder derives its part's key from a secret of its own (Holdings::PartKey).
  static Result<SigningKey> FromSeed(const std::array<uint8_t, 32>& seed);

  const PublicKey& public_key() const { return public_key_; }
  Signature Sign(std::span<const uint8_t> message) const;

 private:
  struct Freer {
    void operator()(void* key) const;
  };
  static Result<SigningKey> Of(std::unique_ptr<void, Freer> key);
  SigningKey(std::unique_ptr<void, Freer> key, const PublicKey& public_key)
      : key_(std::move(key)), public_key_(public_key) {}

  std::shared_ptr<void> key_;  // EVP_PKEY, kept out of this header; shared by copies, never changed
  PublicKey public_key_{};
};

// The key a message's 32 bytes hold (Payload.digest_key); InvalidArgument for another length.
Result<PublicKey> PublicKeyFromBytes(std::string_view bytes);

// Whether `signature` is `key`'s over `message`.
bool VerifySignature(const PublicKey& key, std::span<const uint8_t> message, const Signature& signature);

}  // namespace gridcast
