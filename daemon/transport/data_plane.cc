#include "daemon/transport/data_plane.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "daemon/membership/cluster_file.h"
#include "daemon/transport/socket_io.h"

namespace gridcast {

namespace asio = boost::asio;
using asio::ip::tcp;

DataPlane::DataPlane(asio::io_context& io, std::string secret, PlanLookup lookup,
                     std::chrono::milliseconds handshake_timeout)
    : io_(io), secret_(std::move(secret)), lookup_(std::move(lookup)),
      handshake_timeout_(handshake_timeout), acceptor_(io) {}

Result<uint16_t> DataPlane::Listen(const std::string& address) {
  GRIDCAST_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(address));
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
    auto socket = std::make_shared<tcp::socket>(io_);
    boost::system::error_code ec;
    co_await acceptor_.async_accept(*socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) {
      spdlog::warn("data plane: accept failed: {}", ec.message());
      continue;
    }
    socket->set_option(tcp::no_delay(true), ec);
    asio::co_spawn(io_, Handshake(socket), asio::detached);
  }
}

asio::awaitable<void> DataPlane::Handshake(std::shared_ptr<tcp::socket> socket) {
  boost::system::error_code ec;
  const tcp::endpoint peer = socket->remote_endpoint(ec);
  const std::string from = ec ? "unknown peer" : peer.address().to_string();
  auto refuse = [&](const Status& why, const Hello* hello) -> asio::awaitable<void> {
    spdlog::warn("data plane: refused connection from {}: {}", from, why.message());
    if (hello != nullptr) {
      Accept reject;
      reject.status = static_cast<uint32_t>(why.code());
      reject.extra.assign(why.message().begin(), why.message().end());
      const std::vector<uint8_t> bytes = EncodeAccept(reject);
      (void)co_await WriteAll(socket, asio::buffer(bytes), asio::const_buffer(), handshake_timeout_);
    }
    socket->close(ec);
  };

  Challenge challenge;
  RandomBytes(challenge.nonce);
  const auto challenge_bytes = EncodeChallenge(challenge);
  if (!(co_await WriteAll(socket, asio::buffer(challenge_bytes), asio::const_buffer(), handshake_timeout_)).ok()) co_return;
  std::array<uint8_t, kHelloBytes> hello_bytes{};
  Status read = co_await ReadExactly(socket, hello_bytes, handshake_timeout_);
  if (!read.ok()) {
    co_await refuse(read, nullptr);
    co_return;
  }
  Result<Hello> hello = DecodeHello(hello_bytes);
  if (!hello.ok()) {
    co_await refuse(hello.status(), nullptr);
    co_return;
  }
  // Authenticate before revealing anything about our plans.
  if (!ConstantTimeEqual(hello->mac, ParentMac(secret_, challenge.nonce, *hello))) {
    co_await refuse(Status::Unauthenticated("authentication failed (wrong cluster secret?)"), &*hello);
    co_return;
  }
  std::shared_ptr<PlanExecution> plan = lookup_(hello->plan_id);
  if (plan == nullptr) {
    co_await refuse(Status::NotFound("unknown plan " + ToHex(hello->plan_id)), &*hello);
    co_return;
  }
  Status parent_ok = plan->CheckParent(*hello);
  if (!parent_ok.ok()) {
    co_await refuse(parent_ok, &*hello);
    co_return;
  }
  Accept accept;
  accept.mac = ChildMac(secret_, *hello);
  accept.extra = plan->store().BitmapBytes();
  const std::vector<uint8_t> accept_bytes = EncodeAccept(accept);
  if (!(co_await WriteAll(socket, asio::buffer(accept_bytes), asio::const_buffer(), handshake_timeout_)).ok()) co_return;
  plan->AdoptParentConnection(std::move(*socket), *hello);
}

}  // namespace gridcast
