#include "cluster/certificate_check.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cluster/cluster_file.h"

namespace gridcast {
namespace {

using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;
using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using FilePtr = std::unique_ptr<FILE, decltype(&std::fclose)>;

// "PATH: no such file" and the like, or empty when `path` is a readable regular file.
std::string Unreadable(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return path + ": no such file (the " + what + ")";
  if (!std::filesystem::is_regular_file(path, ec)) return path + ": not a regular file (the " + what + ")";
  FilePtr file(std::fopen(path.c_str(), "r"), std::fclose);
  if (!file) return path + ": cannot be read by this user (the " + what + ")";
  return "";
}

CertPtr ReadCertificate(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "r"), std::fclose);
  CertPtr cert(file ? PEM_read_X509(file.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
  ERR_clear_error();
  return cert;
}

}  // namespace

std::vector<std::string> CheckMemberCertificate(const std::string& cert_path, const std::string& key_path,
                                                const std::string& ca_path, const std::vector<std::string>& hosts) {
  std::vector<std::string> problems;
  for (const auto& [path, what] : {std::pair{cert_path, "member's certificate, --tls-cert"},
                                   std::pair{key_path, "member's key, --tls-key"},
                                   std::pair{ca_path, "cluster's CA, --tls-ca or tls_ca"}}) {
    if (std::string unreadable = Unreadable(path, what); !unreadable.empty()) problems.push_back(unreadable);
  }
  if (!problems.empty()) return problems;

  CertPtr cert = ReadCertificate(cert_path);
  CertPtr ca = ReadCertificate(ca_path);
  FilePtr key_file(std::fopen(key_path.c_str(), "r"), std::fclose);
  KeyPtr key(key_file ? PEM_read_PrivateKey(key_file.get(), nullptr, nullptr, nullptr) : nullptr, EVP_PKEY_free);
  ERR_clear_error();
  if (!cert) problems.push_back(cert_path + ": not a PEM certificate");
  if (!ca) problems.push_back(ca_path + ": not a PEM certificate (the cluster's CA)");
  if (!key) problems.push_back(key_path + ": not a PEM private key (or one with a passphrase)");
  if (!problems.empty()) return problems;

  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    problems.push_back(key_path + ": not the key of " + cert_path);
  }
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> context(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  if (store && context && X509_STORE_add_cert(store.get(), ca.get()) == 1 &&
      X509_STORE_CTX_init(context.get(), store.get(), cert.get(), nullptr) == 1) {
    if (X509_verify_cert(context.get()) != 1) {
      problems.push_back(cert_path + ": does not chain to the CA " + ca_path + " (" +
                         X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get())) + ")");
    }
  }
  ERR_clear_error();
  for (const std::string& host : hosts) {
    const int named = IsIpAddress(host) ? X509_check_ip_asc(cert.get(), host.c_str(), 0)
                                        : X509_check_host(cert.get(), host.c_str(), host.size(), 0, nullptr);
    if (named != 1) problems.push_back(cert_path + ": does not name " + host + ", where this member is reached");
  }
  if (X509_get_extension_flags(cert.get()) & EXFLAG_XKUSAGE) {
    const uint32_t usage = X509_get_extended_key_usage(cert.get());
    std::string lacking;
    if (!(usage & XKU_SSL_SERVER)) lacking = "serverAuth";
    if (!(usage & XKU_SSL_CLIENT)) lacking += std::string(lacking.empty() ? "" : " and ") + "clientAuth";
    if (!lacking.empty()) {
      problems.push_back(cert_path + ": its extended key usage lacks " + lacking +
                         " (a daemon both accepts and dials TLS connections)");
    }
  }
  ERR_clear_error();
  return problems;
}

}  // namespace gridcast
