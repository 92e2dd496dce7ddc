#include "common/signing.h"

#include <openssl/evp.h>

#include <cstring>
#include <string>

namespace gridcast {

void SigningKey::Freer::operator()(void* key) const { EVP_PKEY_free(static_cast<EVP_PKEY*>(key)); }

Result<SigningKey> SigningKey::Generate() {
  return Of(std::unique_ptr<void, Freer>(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")));
}

Result<SigningKey> SigningKey::FromSeed(const std::array<uint8_t, 32>& seed) {
  return Of(std::unique_ptr<void, Freer>(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size())));
}

Result<SigningKey> SigningKey::Of(std::unique_ptr<void, Freer> key) {
  if (key == nullptr) return Status::Internal("OpenSSL could not make an Ed25519 key");
  PublicKey public_key{};
  size_t length = public_key.size();
  if (EVP_PKEY_get_raw_public_key(static_cast<EVP_PKEY*>(key.get()), public_key.data(), &length) != 1 ||
      length != public_key.size()) {
    return Status::Internal("OpenSSL gave no Ed25519 public key");
  }
  return SigningKey(std::move(key), public_key);
}

Signature SigningKey::Sign(std::span<const uint8_t> message) const {
  Signature signature{};
  size_t length = signature.size();
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  // Ed25519 signs the message itself (no digest is named); with a valid key and buffer this
  // cannot fail.
  if (context == nullptr ||
      EVP_DigestSignInit(context, nullptr, nullptr, nullptr, static_cast<EVP_PKEY*>(key_.get())) != 1 ||
      EVP_DigestSign(context, signature.data(), &length, message.data(), message.size()) != 1) {
    signature.fill(0);  // verifies against no key
  }
  EVP_MD_CTX_free(context);
  return signature;
}

Result<PublicKey> PublicKeyFromBytes(std::string_view bytes) {
  PublicKey key{};
  if (bytes.size() != key.size()) {
    return Status::InvalidArgument("a public key is " + std::to_string(key.size()) + " bytes, not " +
                                   std::to_string(bytes.size()));
  }
  std::memcpy(key.data(), bytes.data(), key.size());
  return key;
}

bool VerifySignature(const PublicKey& key, std::span<const uint8_t> message, const Signature& signature) {
  EVP_PKEY* pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size());
  if (pkey == nullptr) return false;
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  const bool valid = context != nullptr && EVP_DigestVerifyInit(context, nullptr, nullptr, nullptr, pkey) == 1 &&
                     EVP_DigestVerify(context, signature.data(), signature.size(), message.data(), message.size()) == 1;
  EVP_MD_CTX_free(context);
  EVP_PKEY_free(pkey);
  return valid;
}

}  // namespace gridcast
