// DataPlane: the data listener of one daemon. Accepts connections from parents on its
// DataTransport (tcp, tls or loopback: connection.h), runs the child side of the handshake
// (handshake.h: challenge, verify the parent's HMAC, its certificate where the transport has
// one and its place in the plan, answer with our HMAC and our verified-chunk bitmap) and hands
// the connection to the plan's LaneReceiver (its execution). Anything malformed,
// unauthenticated or for an unknown plan is refused with a logged reason; the daemon itself is
// never at risk.
// Thread-safety: runs on the io_context's thread; construct and Listen() there or before run().
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "include/gridcast/result.h"
#include "daemon/transport/connection.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

class DataPlane {
 public:
  DataPlane(boost::asio::io_context& io, std::shared_ptr<DataTransport> transport, std::string secret,
            ReceiverLookup lookup, std::chrono::milliseconds handshake_timeout);

  // Listens at "host:port" (port 0 picks one). Returns the bound port.
  Result<uint16_t> Listen(const std::string& address);

 private:
  boost::asio::io_context& io_;
  const std::shared_ptr<DataTransport> transport_;
  const std::string secret_;
  const ReceiverLookup lookup_;
  const std::chrono::milliseconds handshake_timeout_;
};

}  // namespace gridcast
