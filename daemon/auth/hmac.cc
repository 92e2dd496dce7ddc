#include "daemon/auth/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>

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

}  // namespace gridcast
