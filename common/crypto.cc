#include "common/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>

#include "common/hex.h"

namespace gridcast {

Digest HmacSha256(std::string_view key, std::span<const uint8_t> message) {
  Digest out{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), message.data(), message.size(),
       out.data(), &length);
  return out;
}

Digest Sha256(std::span<const uint8_t> data) {
  Sha256Stream stream;
  stream.Update(data);
  return stream.Finish();
}

Sha256Stream::Sha256Stream() : context_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr);
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void Sha256Stream::Update(std::span<const uint8_t> data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data.data(), data.size());
}

Digest Sha256Stream::Finish() {
  Digest out{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), out.data(), &length);
  return out;
}

void RandomBytes(std::span<uint8_t> out) {
  // RAND_bytes only fails when the CSPRNG cannot be seeded; continuing would hand out
  // predictable nonces and secrets, so stop.
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) std::abort();
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RandomBytes({reinterpret_cast<uint8_t*>(raw.data()), raw.size()});
  return ToHex(AsBytes(raw));
}

bool ConstantTimeEqual(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace gridcast
