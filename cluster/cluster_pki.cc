#include "cluster/cluster_pki.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "cluster/cluster_file.h"
#include "include/gridcast/result.h"

namespace gridcast {

namespace fs = std::filesystem;

namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

struct Extension {
  int nid;
  std::string value;
};

Status OpenSslError(const std::string& what) {
  char text[256] = "unknown error";
  if (const unsigned long code = ERR_get_error(); code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return Status::Internal(what + " failed: " + text);
}

// A certificate for `common_name` and `key`, signed by `issuer` (nullptr: self-signed).
Result<CertPtr> MakeCertificate(const std::string& common_name, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key,
                                const std::vector<Extension>& extensions, int days) {
  CertPtr cert(X509_new(), X509_free);
  uint64_t serial = 0;
  if (!cert || RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial) != 1) {
    return OpenSslError("new certificate");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  const bool fields_set =
      X509_set_version(cert.get(), 2) == 1 &&
      ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial >> 1) == 1 &&  // positive
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), int64_t{days} * 86400) != nullptr &&
      X509_set_pubkey(cert.get(), key) == 1 &&
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0) == 1 &&
      X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name) == 1;
  if (!fields_set) return OpenSslError("certificate fields");
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer ? issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const Extension& extension : extensions) {
    X509_EXTENSION* made = X509V3_EXT_conf_nid(nullptr, &context, extension.nid, extension.value.c_str());
    if (made == nullptr) return OpenSslError("certificate extension '" + extension.value + "'");
    const bool added = X509_add_ext(cert.get(), made, -1) == 1;
    X509_EXTENSION_free(made);
    if (!added) return OpenSslError("certificate extension '" + extension.value + "'");
  }
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) return OpenSslError("signing");
  return cert;
}

Status WritePem(const fs::path& path, X509* cert, EVP_PKEY* key) {
  // A key is never readable by others, not even while it is written.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, key != nullptr ? 0600 : 0644);
  FILE* out = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (out == nullptr) {
    if (fd >= 0) close(fd);
    return Status::Unavailable("cannot write " + path.string());
  }
  const bool written = key != nullptr ? PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr) == 1
                                      : PEM_write_X509(out, cert) == 1;
  const bool closed = std::fclose(out) == 0;
  if (!written || !closed) return Status::Unavailable("cannot write " + path.string());
  return Status::Ok();
}

Status IssueMemberCertificate(const fs::path& dir, const PkiMember& member, X509* ca, EVP_PKEY* ca_key, int days) {
  std::string names;
  for (const std::string& host : member.hosts) {
    names += (names.empty() ? "" : ",") + std::string(IsIpAddress(host) ? "IP:" : "DNS:") + host;
  }
  if (names.empty()) return Status::InvalidArgument("member '" + member.name + "' has no host for its certificate");
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) return OpenSslError("member key");
  GRIDCAST_ASSIGN_OR_RETURN(CertPtr cert, MakeCertificate(member.name, key.get(), ca, ca_key,
                                                          {{NID_basic_constraints, "critical,CA:FALSE"},
                                                           {NID_key_usage, "critical,digitalSignature"},
                                                           {NID_ext_key_usage, "serverAuth,clientAuth"},
                                                           {NID_subject_alt_name, names},
                                                           {NID_authority_key_identifier, "keyid"}},
                                                          days));
  GRIDCAST_RETURN_IF_ERROR(WritePem(dir / (member.name + ".pem"), cert.get(), nullptr));
  return WritePem(dir / (member.name + ".key"), nullptr, key.get());
}

}  // namespace

Status WriteClusterPki(const fs::path& dir, const std::vector<PkiMember>& members, int days) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Unavailable("cannot create " + dir.string() + ": " + ec.message());
  KeyPtr ca_key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!ca_key) return OpenSslError("CA key");
  GRIDCAST_ASSIGN_OR_RETURN(CertPtr ca, MakeCertificate("gridcast cluster CA", ca_key.get(), nullptr, nullptr,
                                                        {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                                         {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                                         {NID_subject_key_identifier, "hash"}},
                                                        days));
  GRIDCAST_RETURN_IF_ERROR(WritePem(dir / "ca.pem", ca.get(), nullptr));
  GRIDCAST_RETURN_IF_ERROR(WritePem(dir / "ca.key", nullptr, ca_key.get()));
  for (const PkiMember& member : members) {
    GRIDCAST_RETURN_IF_ERROR(IssueMemberCertificate(dir, member, ca.get(), ca_key.get(), days));
  }
  return Status::Ok();
}

Status AddClusterPkiMember(const fs::path& dir, const PkiMember& member, int days) {
  const fs::path ca_path = dir / "ca.pem";
  const fs::path key_path = dir / "ca.key";
  std::unique_ptr<FILE, decltype(&std::fclose)> ca_file(std::fopen(ca_path.c_str(), "r"), std::fclose);
  std::unique_ptr<FILE, decltype(&std::fclose)> key_file(std::fopen(key_path.c_str(), "r"), std::fclose);
  if (!ca_file || !key_file) {
    return Status::NotFound("the cluster's CA is not in " + dir.string() + " (ca.pem and ca.key, from cluster init --tls)");
  }
  CertPtr ca(PEM_read_X509(ca_file.get(), nullptr, nullptr, nullptr), X509_free);
  KeyPtr ca_key(PEM_read_PrivateKey(key_file.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!ca || !ca_key) return OpenSslError("reading the CA in " + dir.string());
  if (X509_check_private_key(ca.get(), ca_key.get()) != 1) {
    return Status::InvalidArgument(key_path.string() + " is not the key of " + ca_path.string());
  }
  return IssueMemberCertificate(dir, member, ca.get(), ca_key.get(), days);
}

}  // namespace gridcast
