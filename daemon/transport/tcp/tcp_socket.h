// What the TCP-based transports (tcp/ and tls/) share: connecting and listening with
// deadlines, the congestion control choice, and Asio errors as Status. Internal to
// daemon/transport; io thread only.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <span>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "include/gridcast/result.h"

namespace gridcast {

// Chooses the socket's TCP congestion control (TCP_CONGESTION), e.g. "cubic". Fails when the
// kernel lacks the algorithm or does not let this process choose it.
Status SetCongestionControl(boost::asio::ip::tcp::socket& socket, const std::string& algorithm);
// The bytes the socket has received (TCP_INFO's tcpi_bytes_received); nullopt when the kernel
// does not say (before Linux 4.1).
std::optional<uint64_t> KernelBytesReceived(int fd);
// The bytes the peer has acknowledged (TCP_INFO's tcpi_bytes_acked), as KernelBytesReceived.
std::optional<uint64_t> KernelBytesAcked(int fd);
// Caps the socket's sending rate (SO_MAX_PACING_RATE, which turns on the kernel's own TCP
// pacing where the qdisc does not pace); the kernel counts the payload bytes of each segment
// it sends against it. Rounded to whole bytes per second, at most 2^32 - 1 (34 Gbit/s).
void CapPacingRate(int fd, double bytes_per_s);
// Whether `name` can name a congestion control algorithm: 1-15 letters, digits, '_' or '-'.
bool IsCongestionControlName(std::string_view name);

struct TcpOptions {
  // Congestion control of the connections this side opens (to children: the ones that carry
  // the payload); empty keeps the host's default. Cubic, because with BBR (v1) a parent's
  // connections to its children each overestimate their share of the parent's uplink, fill
  // its queue and stall on timeouts: 128 members at 2.5mbit in a two-stripe tree reached
  // 1.30-1.41 of the bound with BBR and 1.11-1.12 with cubic (docs/scale.md).
  std::string congestion = "cubic";
};

// Runs `expire` when `timeout` passes before the Deadline is destroyed (closing the socket,
// which fails the pending operation).
class Deadline {
 public:
  Deadline(const boost::asio::any_io_executor& executor, std::chrono::milliseconds timeout,
           std::function<void()> expire);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
  bool Expired() const;

 private:
  std::shared_ptr<boost::asio::steady_timer> timer_;
};

// An Asio error of operation `what` as Status: DeadlineExceeded when `expired`, Unavailable
// for a closed or failed connection, Unauthenticated for a TLS failure.
Status TransportError(const boost::system::error_code& ec, const std::string& what, bool expired);

// Resolves "host:port", connects within `timeout`, sets TCP_NODELAY and `options.congestion`
// (once refused, said in the log once per process and the host's default kept).
boost::asio::awaitable<Result<boost::asio::ip::tcp::socket>> ConnectTcp(const boost::asio::any_io_executor& executor,
                                                                        const std::string& address,
                                                                        std::chrono::milliseconds timeout,
                                                                        const TcpOptions& options);

// Whether a TCP connection to "host:port" is refused (ECONNREFUSED) within `timeout`; a
// connection made is closed at once.
boost::asio::awaitable<bool> ConnectionRefused(const boost::asio::any_io_executor& executor, const std::string& address,
                                               std::chrono::milliseconds timeout);

// Binds and listens on "ip:port" (port 0 picks one) and accepts for ever (until the acceptor
// goes), handing each socket (TCP_NODELAY set) to `on_accept`. Returns the port.
Result<uint16_t> ListenTcp(const std::shared_ptr<boost::asio::ip::tcp::acceptor>& acceptor, const std::string& address,
                           std::function<void(boost::asio::ip::tcp::socket)> on_accept);

// Asio's transfer_all moves at most 64 KiB per system call; a chunk is a megabyte or more,
// so let each call take all that remains.
inline auto AllRemaining(size_t total_bytes) {
  return [total_bytes](const boost::system::error_code& ec, size_t done) -> size_t {
    return ec ? 0 : total_bytes - done;
  };
}

// Reads exactly out.size() bytes of `stream` (a TCP socket, or a TLS stream over one) before
// `deadline` closes it.
template <typename Stream>
boost::asio::awaitable<Status> ReadStream(Stream& stream, std::span<uint8_t> out, const Deadline& deadline) {
  boost::system::error_code ec;
  co_await boost::asio::async_read(stream, boost::asio::buffer(out.data(), out.size()), AllRemaining(out.size()),
                                   boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  if (ec) co_return TransportError(ec, "read", deadline.Expired());
  co_return Status::Ok();
}

// Writes `head` then `body` to `stream` as one gathered write, before `deadline` closes it.
template <typename Stream>
boost::asio::awaitable<Status> WriteStream(Stream& stream, std::span<const uint8_t> head, std::span<const uint8_t> body,
                                           const Deadline& deadline) {
  boost::system::error_code ec;
  const std::array<boost::asio::const_buffer, 2> buffers = {boost::asio::buffer(head.data(), head.size()),
                                                            boost::asio::buffer(body.data(), body.size())};
  co_await boost::asio::async_write(stream, buffers, AllRemaining(head.size() + body.size()),
                                    boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  if (ec) co_return TransportError(ec, "write", deadline.Expired());
  co_return Status::Ok();
}

}  // namespace gridcast
