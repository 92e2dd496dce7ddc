#include "daemon/transport/data_plane.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cluster/cluster_file.h"
#include "daemon/transport/socket_io.h"

namespace gridcast {

namespace asio = boost::asio;
using asio::ip::tcp;

DataPlane::DataPlane(asio::io_context& io, std::string secret, std::shared_ptr<TlsContext> tls,
                     ReceiverLookup lookup, std::chrono::milliseconds handshake_timeout)
    : io_(io), secret_(std::move(secret)), tls_(std::move(tls)), lookup_(std::move(lookup)),
      handshake_timeout_(handshake_timeout), acceptor_(io) {}

Result<uint16_t> DataPlane::Listen(const std::string& address) {
  GRIDCAST_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(address, /*any_port=*/true));
  boost::system::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(host_port.first, ec);
  if (ec) return Status::InvalidArgument("data address '" + address + "' needs a numeric IP");
  const tcp::endpoint endpoint(ip, host_port.second);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("cannot listen on " + address + ": " + ec.message());
  asio::co_spawn(io_, AcceptLoop(), asio::detached);
  return acceptor_.local_endpoint().port();
}

asio::awaitable<void> DataPlane::AcceptLoop() {
  for (;;) {
    tcp::socket socket(io_);
    boost::system::error_code ec;
    co_await acceptor_.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) {
      spdlog::warn("data plane: accept failed: {}", ec.message());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    asio::co_spawn(io_, Handshake(std::make_shared<DataSocket>(std::move(socket), tls_)), asio::detached);
  }
}

asio::awaitable<void> DataPlane::Handshake(SocketPtr socket) {
  auto accepted = co_await HandshakeAsChild(socket, secret_, lookup_, handshake_timeout_);
  if (!accepted.ok()) co_return;  // logged and closed
  accepted->first->AdoptParentConnection(std::move(socket), accepted->second);
}

}  // namespace gridcast
