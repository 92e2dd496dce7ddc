#include "daemon/transport/tls/tls_context.h"

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>

namespace gridcast {

namespace ssl = boost::asio::ssl;

namespace {

// AES-GCM first: AES-NI makes it the cheapest per byte where the CPU has it. ChaCha20 only
// when a peer offers nothing else.
constexpr const char* kCipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

Status FileError(const std::string& flag, const std::string& path, const boost::system::error_code& ec) {
  return Status::InvalidArgument(flag + " " + path + ": " + ec.message());
}

}  // namespace

TlsContext::TlsContext() : context_(std::make_unique<ssl::context>(ssl::context::tls)) {}
TlsContext::~TlsContext() = default;

ssl::context& TlsContext::native() { return *context_; }

Result<std::shared_ptr<TlsContext>> TlsContext::Load(const std::string& cert_path, const std::string& key_path,
                                                     const std::string& ca_path) {
  std::shared_ptr<TlsContext> tls(new TlsContext());
  ssl::context& context = *tls->context_;
  SSL_CTX* raw = context.native_handle();
  if (SSL_CTX_set_min_proto_version(raw, TLS1_3_VERSION) != 1 || SSL_CTX_set_ciphersuites(raw, kCipherSuites) != 1) {
    return Status::Internal("this OpenSSL cannot do TLS 1.3");
  }
  SSL_CTX_set_num_tickets(raw, 0);
  SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert_path, ec);
  if (ec) return FileError("--tls-cert", cert_path, ec);
  // Fails when the key is not the certificate's.
  context.use_private_key_file(key_path, ssl::context::pem, ec);
  if (ec) return FileError("--tls-key", key_path, ec);
  context.load_verify_file(ca_path, ec);
  if (ec) return FileError("--tls-ca", ca_path, ec);
  context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
  if (ec) return Status::Internal("TLS verify mode: " + ec.message());
  return tls;
}

}  // namespace gridcast
