#include "daemon/transport/socket_io.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "cluster/cluster_file.h"

namespace gridcast {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Closes the socket if still armed when the deadline passes.
class Deadline {
 public:
  Deadline(SocketPtr socket, std::chrono::milliseconds timeout)
      : timer_(std::make_shared<asio::steady_timer>(socket->get_executor())) {
    timer_->expires_after(timeout);
    timer_->async_wait([socket](boost::system::error_code ec) {
      if (!ec) {
        boost::system::error_code ignored;
        socket->close(ignored);
      }
    });
  }
  ~Deadline() { timer_->cancel(); }
  bool Expired() const { return timer_->expiry() <= std::chrono::steady_clock::now(); }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
};

// Asio's transfer_all moves at most 64 KiB per system call; a chunk is a megabyte or more,
// so let each call take all that remains.
auto AllRemaining(size_t total_bytes) {
  return [total_bytes](const boost::system::error_code& ec, size_t done) -> size_t {
    return ec ? 0 : total_bytes - done;
  };
}

Status FromError(const boost::system::error_code& ec, const char* what, bool expired) {
  if (expired) return Status::DeadlineExceeded(std::string(what) + " timed out");
  if (ec == asio::error::eof) return Status::Unavailable(std::string(what) + ": connection closed");
  return Status::Unavailable(std::string(what) + ": " + ec.message());
}

}  // namespace

asio::awaitable<Status> ConnectWithTimeout(SocketPtr socket, const std::string& address,
                                           std::chrono::milliseconds timeout) {
  Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(address);
  if (!host_port.ok()) co_return host_port.status();
  boost::system::error_code ec;
  tcp::resolver resolver(socket->get_executor());
  auto endpoints = co_await resolver.async_resolve(host_port->first, std::to_string(host_port->second),
                                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Status::Unavailable("cannot resolve " + address + ": " + ec.message());
  Deadline deadline(socket, timeout);
  co_await asio::async_connect(*socket, endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return FromError(ec, ("connect to " + address).c_str(), deadline.Expired());
  socket->set_option(tcp::no_delay(true), ec);
  co_return Status::Ok();
}

Status SetCongestionControl(tcp::socket& socket, const std::string& algorithm) {
  if (setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CONGESTION, algorithm.data(),
                 static_cast<socklen_t>(algorithm.size())) != 0) {
    return Status::Unavailable("TCP congestion control '" + algorithm + "': " + std::strerror(errno));
  }
  return Status::Ok();
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

asio::awaitable<Status> ReadExactly(SocketPtr socket, std::span<uint8_t> out,
                                    std::chrono::milliseconds timeout) {
  if (out.empty()) co_return Status::Ok();
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  co_await asio::async_read(*socket, asio::buffer(out.data(), out.size()), AllRemaining(out.size()),
                            asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return FromError(ec, "read", deadline.Expired());
  co_return Status::Ok();
}

asio::awaitable<Status> WriteAll(SocketPtr socket, asio::const_buffer head, asio::const_buffer body,
                                 std::chrono::milliseconds timeout) {
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  const std::array<asio::const_buffer, 2> buffers = {head, body};
  co_await asio::async_write(*socket, buffers, AllRemaining(head.size() + body.size()),
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return FromError(ec, "write", deadline.Expired());
  co_return Status::Ok();
}

asio::awaitable<Status> WriteHeadAndFile(SocketPtr socket, asio::const_buffer head, int fd, uint64_t offset,
                                         uint64_t length, std::chrono::milliseconds timeout) {
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  socket->native_non_blocking(true, ec);
  if (ec) co_return FromError(ec, "write", false);
  const auto* head_bytes = static_cast<const uint8_t*>(head.data());
  size_t head_done = 0;
  off_t file_offset = static_cast<off_t>(offset);
  uint64_t left = length;
  while (head_done < head.size() || left > 0) {
    // Read each time: a socket closed meanwhile (stop, deadline) reads as -1, never as a
    // descriptor number that something else may have reused.
    const int s = socket->native_handle();
    ssize_t n;
    if (head_done < head.size()) {
      // MSG_MORE: the header leaves in one segment with the first bytes of the file.
      n = ::send(s, head_bytes + head_done, head.size() - head_done, MSG_NOSIGNAL | (left > 0 ? MSG_MORE : 0));
      if (n > 0) head_done += static_cast<size_t>(n);
    } else {
      n = ::sendfile(s, fd, &file_offset, std::min<uint64_t>(left, size_t{1} << 30));
      if (n > 0) left -= static_cast<uint64_t>(n);
      if (n == 0) co_return Status::DataLoss("sendfile: the file is shorter than expected");
    }
    if (n >= 0 || errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      if (deadline.Expired()) co_return Status::DeadlineExceeded("write timed out");
      co_return Status::Unavailable(std::string("write: ") + std::strerror(errno));
    }
    co_await socket->async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return FromError(ec, "write", deadline.Expired());
  }
  co_return Status::Ok();
}

}  // namespace gridcast
