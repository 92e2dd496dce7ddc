// The data plane's connections and coroutine helpers: connect, secure, read and write with a
// deadline, errors as Status. A deadline closes the socket, which fails the pending operation.
// Sockets are held by shared_ptr so a deadline that fires late never touches a destroyed one.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "daemon/transport/tls_context.h"

// Like GRIDCAST_RETURN_IF_ERROR, for coroutines returning awaitable<Status>.
#define GRIDCAST_CO_RETURN_IF_ERROR(expr)          \
  do {                                             \
    ::gridcast::Status gridcast_co_status_ = (expr); \
    if (!gridcast_co_status_.ok()) co_return gridcast_co_status_; \
  } while (0)

namespace gridcast {

// One data-plane connection: plain TCP, or TLS over it when the daemon has a TlsContext. With
// TLS, payload bytes leave through user space (encrypted) instead of sendfile. One read and
// one write may be pending at a time, as on a TCP socket.
class DataSocket {
 public:
  // `tls` null: plaintext.
  DataSocket(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> tls);
  ~DataSocket();
  DataSocket(const DataSocket&) = delete;
  DataSocket& operator=(const DataSocket&) = delete;

  boost::asio::ip::tcp::socket& tcp();
  bool encrypted() const;
  // Closes the TCP socket (no TLS close_notify: the peers' frames say where a stream ends).
  void Close();

  struct Tls;  // socket_io.cc
  Tls* tls() { return tls_.get(); }

 private:
  std::unique_ptr<Tls> tls_;
  std::unique_ptr<boost::asio::ip::tcp::socket> plain_;
};

using SocketPtr = std::shared_ptr<DataSocket>;

enum class TlsRole { kConnected, kAccepted };

// The TLS handshake on a connected or accepted socket; nothing to do when it is plaintext. A
// peer whose certificate does not chain to the cluster's CA (or that speaks no TLS) fails with
// Unauthenticated; a timeout or a closed connection as usual.
boost::asio::awaitable<Status> SecureHandshake(SocketPtr socket, TlsRole role, std::chrono::milliseconds timeout);

// With TLS, OK when the peer's certificate names the host of `data_address` (the member the
// peer claims to be): a DNS name or an IP address in its subjectAltName. Unauthenticated
// otherwise. Always OK on a plaintext socket.
Status CheckPeerCertificate(DataSocket& socket, const std::string& data_address);

// Resolves "host:port" and connects.
boost::asio::awaitable<Status> ConnectWithTimeout(SocketPtr socket,
                                                  const std::string& address,
                                                  std::chrono::milliseconds timeout);

// Chooses the socket's TCP congestion control (TCP_CONGESTION), e.g. "cubic". Fails when the
// kernel lacks the algorithm or does not let this process choose it.
Status SetCongestionControl(boost::asio::ip::tcp::socket& socket, const std::string& algorithm);
// Whether `name` can name a congestion control algorithm: 1-15 letters, digits, '_' or '-'.
bool IsCongestionControlName(std::string_view name);

boost::asio::awaitable<Status> ReadExactly(SocketPtr socket, std::span<uint8_t> out,
                                           std::chrono::milliseconds timeout);

// Writes head, then body (which may be empty), as one gathered write.
boost::asio::awaitable<Status> WriteAll(SocketPtr socket, boost::asio::const_buffer head,
                                        boost::asio::const_buffer body,
                                        std::chrono::milliseconds timeout);

// Writes head, then `length` bytes of file `fd` from `offset`. Plaintext uses sendfile: the
// kernel sends the file's page-cache pages without copying them through user space. TLS reads
// the file in slices into the socket's staging buffer and encrypts them.
boost::asio::awaitable<Status> WriteHeadAndFile(SocketPtr socket, boost::asio::const_buffer head, int fd,
                                                uint64_t offset, uint64_t length,
                                                std::chrono::milliseconds timeout);

}  // namespace gridcast
