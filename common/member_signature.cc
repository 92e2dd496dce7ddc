#include "common/member_signature.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>

#include <fstream>
#include <sstream>

namespace gridcast {
namespace {

// A certificate chain in a plan: a few KiB; more is not one.
constexpr size_t kMaxCertificateBytes = 64 << 10;

std::string Statement(std::string_view context, std::string_view bound, const PublicKey& key) {
  std::string out(context);
  out.append(bound);
  out.append(reinterpret_cast<const char*>(key.data()), key.size());
  return out;
}

// The digest a key of this type signs with: none for the EdDSA keys, SHA-256 otherwise.
const EVP_MD* DigestFor(const EVP_PKEY* key) {
  const int type = EVP_PKEY_get_base_id(key);
  return type == EVP_PKEY_ED25519 || type == EVP_PKEY_ED448 ? nullptr : EVP_sha256();
}

bool IsIpAddress(const std::string& host) {
  unsigned char bytes[16];
  return inet_pton(AF_INET, host.c_str(), bytes) == 1 || inet_pton(AF_INET6, host.c_str(), bytes) == 1;
}

}  // namespace

std::string DigestKeyStatement(const PlanId& plan, const PublicKey& key) {
  return Statement("gridcast-digest-key-1",
                   std::string_view(reinterpret_cast<const char*>(plan.bytes().data()), plan.bytes().size()), key);
}

std::string PartKeyStatement(std::string_view nonce, const PublicKey& key) {
  return Statement("gridcast-part-key-1", nonce, key);
}

Result<std::shared_ptr<const MemberSigner>> MemberSigner::Load(const std::string& cert_path,
                                                               const std::string& key_path) {
  std::ifstream in(cert_path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty() || text.str().size() > kMaxCertificateBytes) {
    return Status::InvalidArgument("cannot read a certificate of at most 64 KiB from " + cert_path);
  }
  BIO* bio = BIO_new_file(key_path.c_str(), "r");
  EVP_PKEY* key = bio != nullptr ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(bio);
  ERR_clear_error();
  if (key == nullptr) return Status::InvalidArgument("cannot read a private key from " + key_path);
  std::shared_ptr<MemberSigner> signer(new MemberSigner());
  signer->certificate_pem_ = text.str();
  signer->key_ = key;
  return std::shared_ptr<const MemberSigner>(std::move(signer));
}

MemberSigner::~MemberSigner() { EVP_PKEY_free(static_cast<EVP_PKEY*>(key_)); }

Result<std::string> MemberSigner::Sign(std::string_view message) const {
  auto* key = static_cast<EVP_PKEY*>(key_);
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  size_t length = 0;
  std::string signature;
  const auto* bytes = reinterpret_cast<const unsigned char*>(message.data());
  bool signed_ok = context != nullptr && EVP_DigestSignInit(context, nullptr, DigestFor(key), nullptr, key) == 1 &&
                   EVP_DigestSign(context, nullptr, &length, bytes, message.size()) == 1;
  if (signed_ok) {
    signature.resize(length);
    signed_ok = EVP_DigestSign(context, reinterpret_cast<unsigned char*>(signature.data()), &length, bytes,
                               message.size()) == 1;
    signature.resize(length);
  }
  EVP_MD_CTX_free(context);
  if (!signed_ok) return Status::Internal("OpenSSL could not sign with this member's TLS key");
  return signature;
}

Result<std::shared_ptr<const MemberVerifier>> MemberVerifier::Load(const std::string& ca_path) {
  X509_STORE* store = X509_STORE_new();
  if (store == nullptr || X509_STORE_load_file(store, ca_path.c_str()) != 1) {
    X509_STORE_free(store);
    return Status::InvalidArgument("cannot read the cluster's CA from " + ca_path);
  }
  std::shared_ptr<MemberVerifier> verifier(new MemberVerifier());
  verifier->store_ = store;
  return std::shared_ptr<const MemberVerifier>(std::move(verifier));
}

MemberVerifier::~MemberVerifier() { X509_STORE_free(static_cast<X509_STORE*>(store_)); }

Status MemberVerifier::Verify(std::string_view certificate, const std::string& host, std::string_view message,
                              std::string_view signature, const std::string& who) const {
  if (certificate.empty() || certificate.size() > kMaxCertificateBytes) {
    return Status::Unauthenticated(who + " sent no certificate of at most 64 KiB with its key");
  }
  BIO* bio = BIO_new_mem_buf(certificate.data(), static_cast<int>(certificate.size()));
  X509* leaf = bio != nullptr ? PEM_read_bio_X509(bio, nullptr, nullptr, nullptr) : nullptr;
  STACK_OF(X509)* chain = sk_X509_new_null();
  for (X509* next = nullptr; leaf != nullptr && chain != nullptr && (next = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));) {
    sk_X509_push(chain, next);
  }
  BIO_free(bio);
  Status verdict = Status::Ok();
  X509_STORE_CTX* context = X509_STORE_CTX_new();
  if (leaf == nullptr || chain == nullptr || context == nullptr) {
    verdict = Status::Unauthenticated("the certificate of " + who + " cannot be read");
  } else if (X509_STORE_CTX_init(context, static_cast<X509_STORE*>(store_), leaf, chain) != 1 ||
             X509_verify_cert(context) != 1) {
    verdict = Status::Unauthenticated("the certificate of " + who + " is not from the cluster's CA: " +
                                      X509_verify_cert_error_string(X509_STORE_CTX_get_error(context)));
  } else {
    // Names from the subjectAltName only (never the subject's CN), as the data plane checks.
    const unsigned flags = X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS;
    const int named = IsIpAddress(host) ? X509_check_ip_asc(leaf, host.c_str(), 0)
                                        : X509_check_host(leaf, host.data(), host.size(), flags, nullptr);
    EVP_PKEY* key = X509_get0_pubkey(leaf);
    EVP_MD_CTX* check = EVP_MD_CTX_new();
    if (named != 1) {
      verdict = Status::Unauthenticated("the certificate of " + who + " is not for " + host);
    } else if (key == nullptr || check == nullptr ||
               EVP_DigestVerifyInit(check, nullptr, DigestFor(key), nullptr, key) != 1 ||
               EVP_DigestVerify(check, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                                reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1) {
      verdict = Status::Unauthenticated(who + " did not sign this key");
    }
    EVP_MD_CTX_free(check);
  }
  X509_STORE_CTX_free(context);
  sk_X509_pop_free(chain, X509_free);
  X509_free(leaf);
  // The chain's read ends at the end of the PEM with an error queued on this thread: it must
  // not be taken for a later TLS call's own.
  ERR_clear_error();
  return verdict;
}

}  // namespace gridcast
