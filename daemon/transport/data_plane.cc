#include "daemon/transport/data_plane.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace gridcast {

namespace asio = boost::asio;

namespace {

// Parameters by value: the coroutine's frame holds them while the handshake runs.
asio::awaitable<void> Handshake(ConnectionPtr connection, std::string secret, ReceiverLookup lookup,
                                std::chrono::milliseconds timeout) {
  auto accepted = co_await HandshakeAsChild(connection, secret, lookup, timeout);
  if (!accepted.ok()) co_return;  // logged and closed
  accepted->first->AdoptParentConnection(std::move(connection), accepted->second);
}

}  // namespace

DataPlane::DataPlane(asio::io_context& io, std::shared_ptr<DataTransport> transport, std::string secret,
                     ReceiverLookup lookup, std::chrono::milliseconds handshake_timeout)
    : io_(io),
      transport_(std::move(transport)),
      secret_(std::move(secret)),
      lookup_(std::move(lookup)),
      handshake_timeout_(handshake_timeout) {}

Result<uint16_t> DataPlane::Listen(const std::string& address) {
  return transport_->Listen(address, [this](ConnectionPtr connection) {
    asio::co_spawn(io_, Handshake(std::move(connection), secret_, lookup_, handshake_timeout_), asio::detached);
  });
}

}  // namespace gridcast
