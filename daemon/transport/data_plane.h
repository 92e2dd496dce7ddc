// DataPlane: the data listener of one daemon. Accepts connections from parents, runs the
// child side of the handshake (handshake.h: TLS when configured, challenge, verify the parent's HMAC and its place
// in the plan, answer with our HMAC and our verified-chunk bitmap) and hands the socket to the
// plan's LaneReceiver (its execution). Anything malformed, unauthenticated or for an unknown
// plan is refused with a logged reason; the daemon itself is never at risk.
// Thread-safety: runs on the io_context's thread; construct and Start() there or before run().
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

class DataPlane {
 public:
  // `tls` null: plaintext connections.
  DataPlane(boost::asio::io_context& io, std::string secret, std::shared_ptr<TlsContext> tls, ReceiverLookup lookup,
            std::chrono::milliseconds handshake_timeout);

  // Binds "host:port" (port 0 picks one). Returns the bound port.
  Result<uint16_t> Listen(const std::string& address);

 private:
  boost::asio::awaitable<void> AcceptLoop();
  boost::asio::awaitable<void> Handshake(SocketPtr socket);

  boost::asio::io_context& io_;
  const std::string secret_;
  const std::shared_ptr<TlsContext> tls_;
  const ReceiverLookup lookup_;
  const std::chrono::milliseconds handshake_timeout_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace gridcast
