// Coroutine helpers for the data plane: connect, read and write with a deadline, errors as
// Status. A deadline closes the socket, which fails the pending operation. Sockets are held
// by shared_ptr so a deadline that fires late never touches a destroyed socket.
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

// Like GRIDCAST_RETURN_IF_ERROR, for coroutines returning awaitable<Status>.
#define GRIDCAST_CO_RETURN_IF_ERROR(expr)          \
  do {                                             \
    ::gridcast::Status gridcast_co_status_ = (expr); \
    if (!gridcast_co_status_.ok()) co_return gridcast_co_status_; \
  } while (0)

namespace gridcast {

using SocketPtr = std::shared_ptr<boost::asio::ip::tcp::socket>;

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

// Writes head, then `length` bytes of file `fd` from `offset` with sendfile: the kernel sends
// the file's page-cache pages without copying them through user space.
boost::asio::awaitable<Status> WriteHeadAndFile(SocketPtr socket, boost::asio::const_buffer head, int fd,
                                                uint64_t offset, uint64_t length,
                                                std::chrono::milliseconds timeout);

}  // namespace gridcast
