#include "daemon/transport/tcp/tcp_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>

#include "cluster/cluster_file.h"

namespace gridcast {

namespace asio = boost::asio;
using asio::ip::tcp;

Status SetCongestionControl(tcp::socket& socket, const std::string& algorithm) {
  if (setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CONGESTION, algorithm.data(),
                 static_cast<socklen_t>(algorithm.size())) != 0) {
    return Status::Unavailable("TCP congestion control '" + algorithm + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

namespace {

// A counter of the kernel's struct tcp_info (linux/tcp.h) at byte `offset`: tcpi_bytes_acked
// at 120 and tcpi_bytes_received at 128 (Linux 4.1 on; the struct only grows). glibc's struct
// stops before them, and linux/tcp.h cannot be included beside netinet/tcp.h, which Asio
// includes.
std::optional<uint64_t> TcpInfoCounter(int fd, size_t offset) {
  constexpr size_t kLastCounterEnd = 128 + sizeof(uint64_t);
  uint8_t info[kLastCounterEnd] = {};
  socklen_t length = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &length) != 0 || length < offset + sizeof(uint64_t)) {
    return std::nullopt;
  }
  uint64_t value = 0;
  std::memcpy(&value, info + offset, sizeof value);
  return value;
}

}  // namespace

std::optional<uint64_t> KernelBytesReceived(int fd) { return TcpInfoCounter(fd, 128); }

std::optional<uint64_t> KernelBytesAcked(int fd) { return TcpInfoCounter(fd, 120); }

void CapPacingRate(int fd, double bytes_per_s) {
  const double clamped = std::clamp(bytes_per_s, 1.0, static_cast<double>(std::numeric_limits<uint32_t>::max()));
  const auto rate = static_cast<uint32_t>(clamped);
  if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) != 0) {
    spdlog::debug("SO_MAX_PACING_RATE {}: {}", rate, std::strerror(errno));
  }
}

bool IsCongestionControlName(std::string_view name) {
  // TCP_CA_NAME_MAX is 16 with the terminating NUL.
  if (name.empty() || name.size() > 15) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Deadline::Deadline(const asio::any_io_executor& executor, std::chrono::milliseconds timeout,
                   std::function<void()> expire)
    : timer_(std::make_shared<asio::steady_timer>(executor)) {
  timer_->expires_after(timeout);
  timer_->async_wait([expire = std::move(expire)](boost::system::error_code ec) {
    if (!ec) expire();
  });
}

Deadline::~Deadline() { timer_->cancel(); }

bool Deadline::Expired() const { return timer_->expiry() <= std::chrono::steady_clock::now(); }

Status TransportError(const boost::system::error_code& ec, const std::string& what, bool expired) {
  if (expired) return Status::DeadlineExceeded(what + " timed out");
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    return Status::Unavailable(what + ": connection closed");
  }
  // A TLS 1.3 client learns that the server refused its certificate at its first read; later,
  // a record that fails its check means the stream was tampered with.
  if (ec.category() == asio::error::get_ssl_category()) return Status::Unauthenticated(what + ": TLS: " + ec.message());
  return Status::Unavailable(what + ": " + ec.message());
}

namespace {

// A resolved and connected socket, or why not: the status, and the connect's error code.
struct Dialled {
  std::shared_ptr<tcp::socket> socket;
  Status status;
  boost::system::error_code ec;
};

asio::awaitable<Dialled> Dial(const asio::any_io_executor& executor, const std::string& address,
                              std::chrono::milliseconds timeout) {
  Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(address);
  if (!host_port.ok()) co_return Dialled{nullptr, host_port.status(), {}};
  boost::system::error_code ec;
  tcp::resolver resolver(executor);
  auto endpoints = co_await resolver.async_resolve(host_port->first, std::to_string(host_port->second),
                                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Dialled{nullptr, Status::Unavailable("cannot resolve " + address + ": " + ec.message()), ec};
  // Shared with the deadline: a deadline that fires late never touches a destroyed socket.
  auto socket = std::make_shared<tcp::socket>(executor);
  Deadline deadline(executor, timeout, [socket] {
    boost::system::error_code ignored;
    socket->close(ignored);
  });
  co_await asio::async_connect(*socket, endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Dialled{nullptr, TransportError(ec, "connect to " + address, deadline.Expired()), ec};
  co_return Dialled{std::move(socket), Status::Ok(), {}};
}

}  // namespace

asio::awaitable<Result<tcp::socket>> ConnectTcp(const asio::any_io_executor& executor, const std::string& address,
                                                std::chrono::milliseconds timeout, const TcpOptions& options) {
  Dialled dialled = co_await Dial(executor, address, timeout);
  if (!dialled.status.ok()) co_return dialled.status;
  tcp::socket& socket = *dialled.socket;
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  // With the peer down, a connect to a local port can meet itself (TCP simultaneous open on
  // an ephemeral port equal to the target): that would hold the peer's port. Drop it.
  boost::system::error_code local_ec, remote_ec;
  if (socket.local_endpoint(local_ec) == socket.remote_endpoint(remote_ec) && !local_ec) {
    co_return Status::Unavailable("connected to itself: " + address + " is down");
  }
  if (!options.congestion.empty()) {
    Status chosen = SetCongestionControl(socket, options.congestion);
    static std::atomic<bool> warned{false};
    if (!chosen.ok() && !warned.exchange(true)) spdlog::warn("{}; the host's default is used", chosen.message());
  }
  co_return std::move(socket);
}

asio::awaitable<bool> ConnectionRefused(const asio::any_io_executor& executor, const std::string& address,
                                        std::chrono::milliseconds timeout) {
  Dialled dialled = co_await Dial(executor, address, timeout);
  if (dialled.socket != nullptr) {
    boost::system::error_code ignored;
    dialled.socket->close(ignored);
  }
  co_return dialled.ec == asio::error::connection_refused;
}

namespace {

asio::awaitable<void> AcceptForEver(std::shared_ptr<tcp::acceptor> acceptor,
                                    std::function<void(tcp::socket)> on_accept) {
  for (;;) {
    tcp::socket socket(acceptor->get_executor());
    boost::system::error_code ec;
    co_await acceptor->async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      spdlog::warn("data plane: accept failed: {}", ec.message());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    on_accept(std::move(socket));
  }
}

}  // namespace

Result<uint16_t> ListenTcp(const std::shared_ptr<tcp::acceptor>& acceptor, const std::string& address,
                           std::function<void(tcp::socket)> on_accept) {
  GRIDCAST_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(address, /*any_port=*/true));
  boost::system::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(host_port.first, ec);
  if (ec) return Status::InvalidArgument("data address '" + address + "' needs a numeric IP");
  const tcp::endpoint endpoint(ip, host_port.second);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("cannot listen on " + address + ": " + ec.message());
  asio::co_spawn(acceptor->get_executor(), AcceptForEver(acceptor, std::move(on_accept)), asio::detached);
  return acceptor->local_endpoint().port();
}

}  // namespace gridcast
