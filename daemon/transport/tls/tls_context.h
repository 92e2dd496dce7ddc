// TlsContext: the data plane's TLS settings, shared by every connection of one daemon. Mutual
// TLS 1.3: a member presents its certificate and key, and accepts a peer only when the peer's
// certificate chains to the cluster's CA (tls_transport.h checks, after the handshake, that it
// also names the member the peer claims to be). No session tickets or cache: each connection
// proves its certificate afresh (a broadcast opens few, long connections).
#pragma once

#include <memory>
#include <string>

#include "include/gridcast/result.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace gridcast {

class TlsContext {
 public:
  // PEM files: this member's certificate (chain), its private key, the cluster's CA. Errors
  // name the file and what is wrong with it.
  static Result<std::shared_ptr<TlsContext>> Load(const std::string& cert_path, const std::string& key_path,
                                                  const std::string& ca_path);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  boost::asio::ssl::context& native();

 private:
  TlsContext();
  std::unique_ptr<boost::asio::ssl::context> context_;
};

}  // namespace gridcast
