// The TLS transport: mutual TLS 1.3 over TCP (TlsContext). Each side proves its certificate
// chains to the cluster's CA in the TLS handshake, and checks the other names the member it
// claims to be: the connecting side at Connect (the host it dialled), the accepting side with
// CheckPeer once the handshake's Hello named the parent. Chunks leave a file through a small
// staging buffer and the cipher (no sendfile: the kernel here has no kernel TLS). io thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "daemon/transport/connection.h"
#include "daemon/transport/tcp/tcp_socket.h"
#include "daemon/transport/tls/tls_context.h"

namespace gridcast {

class TlsConnection;

class TlsTransport final : public DataTransport {
 public:
  // `handshake_timeout` bounds an accepted connection's TLS handshake.
  TlsTransport(boost::asio::io_context& io, std::shared_ptr<TlsContext> context, TcpOptions options,
               std::chrono::milliseconds handshake_timeout);
  ~TlsTransport() override;

  boost::asio::awaitable<Result<ConnectionPtr>> Connect(std::string address,
                                                        std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<bool> Refuses(std::string address, std::chrono::milliseconds timeout) override;
  Result<uint16_t> Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) override;

 private:
  boost::asio::io_context& io_;
  const std::shared_ptr<TlsContext> context_;
  const TcpOptions options_;
  const std::chrono::milliseconds handshake_timeout_;
  std::shared_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
};

}  // namespace gridcast
