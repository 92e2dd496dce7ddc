#include "daemon/transport/tcp/tcp_transport.h"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>

namespace gridcast {

namespace asio = boost::asio;
using asio::ip::tcp;

TcpConnection::TcpConnection(tcp::socket socket) : socket_(std::move(socket)) {}

std::string TcpConnection::PeerName() const {
  boost::system::error_code ec;
  const tcp::endpoint peer = socket_.remote_endpoint(ec);
  return ec ? "unknown peer" : peer.address().to_string();
}

std::optional<uint64_t> TcpConnection::KernelBytesReceived() {
  return socket_.is_open() ? gridcast::KernelBytesReceived(socket_.native_handle()) : std::nullopt;
}

std::optional<uint64_t> TcpConnection::KernelBytesAcked() {
  return socket_.is_open() ? gridcast::KernelBytesAcked(socket_.native_handle()) : std::nullopt;
}

void TcpConnection::CapSendRate(double bytes_per_s) {
  if (socket_.is_open()) CapPacingRate(socket_.native_handle(), bytes_per_s);
}

void TcpConnection::Close() {
  boost::system::error_code ignored;
  socket_.close(ignored);
}

Deadline TcpConnection::DeadlineAfter(std::chrono::milliseconds timeout) {
  return Deadline(socket_.get_executor(), timeout, [self = shared_from_this()] { self->Close(); });
}

asio::awaitable<Status> TcpConnection::Read(std::span<uint8_t> out, std::chrono::milliseconds timeout) {
  if (out.empty()) co_return Status::Ok();
  const Deadline deadline = DeadlineAfter(timeout);
  co_return co_await ReadStream(socket_, out, deadline);
}

asio::awaitable<Status> TcpConnection::Write(std::span<const uint8_t> head, std::span<const uint8_t> body,
                                             std::chrono::milliseconds timeout) {
  const Deadline deadline = DeadlineAfter(timeout);
  co_return co_await WriteStream(socket_, head, body, deadline);
}

asio::awaitable<Status> TcpConnection::SendChunk(std::span<const uint8_t> head, ChunkRef chunk,
                                                 std::chrono::milliseconds timeout) {
  if (chunk.in_memory()) co_return co_await Write(head, chunk.memory, timeout);
  co_return co_await SendFileRange(head, chunk, timeout);
}

asio::awaitable<Status> TcpConnection::SendFileRange(std::span<const uint8_t> head, ChunkRef chunk,
                                                     std::chrono::milliseconds timeout) {
  const Deadline deadline = DeadlineAfter(timeout);
  boost::system::error_code ec;
  socket_.native_non_blocking(true, ec);
  if (ec) co_return TransportError(ec, "write", false);
  size_t head_done = 0;
  off_t file_offset = static_cast<off_t>(chunk.offset);
  uint64_t left = chunk.length;
  while (head_done < head.size() || left > 0) {
    // Read each time: a socket closed meanwhile (stop, deadline) reads as -1, never as a
    // descriptor number that something else may have reused.
    const int s = socket_.native_handle();
    ssize_t n;
    if (head_done < head.size()) {
      // MSG_MORE: the header leaves in one segment with the first bytes of the file.
      n = ::send(s, head.data() + head_done, head.size() - head_done, MSG_NOSIGNAL | (left > 0 ? MSG_MORE : 0));
      if (n > 0) head_done += static_cast<size_t>(n);
    } else {
      n = ::sendfile(s, chunk.fd, &file_offset, std::min<uint64_t>(left, size_t{1} << 30));
      if (n > 0) left -= static_cast<uint64_t>(n);
      if (n == 0) co_return Status::DataLoss("sendfile: the file is shorter than expected");
    }
    if (n >= 0 || errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      if (deadline.Expired()) co_return Status::DeadlineExceeded("write timed out");
      co_return Status::Unavailable(std::string("write: ") + std::strerror(errno));
    }
    co_await socket_.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return TransportError(ec, "write", deadline.Expired());
  }
  co_return Status::Ok();
}

TcpTransport::TcpTransport(asio::io_context& io, TcpOptions options)
    : io_(io), options_(std::move(options)), acceptor_(std::make_shared<tcp::acceptor>(io)) {}

TcpTransport::~TcpTransport() {
  boost::system::error_code ignored;
  acceptor_->close(ignored);
}

asio::awaitable<Result<ConnectionPtr>> TcpTransport::Connect(std::string address,
                                                             std::chrono::milliseconds timeout) {
  Result<tcp::socket> socket = co_await ConnectTcp(io_.get_executor(), address, timeout, options_);
  if (!socket.ok()) co_return socket.status();
  co_return ConnectionPtr(std::make_shared<TcpConnection>(std::move(*socket)));
}

asio::awaitable<bool> TcpTransport::Refuses(std::string address, std::chrono::milliseconds timeout) {
  co_return co_await ConnectionRefused(io_.get_executor(), address, timeout);
}

Result<uint16_t> TcpTransport::Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) {
  return ListenTcp(acceptor_, address, [on_accept = std::move(on_accept)](tcp::socket socket) {
    on_accept(std::make_shared<TcpConnection>(std::move(socket)));
  });
}

}  // namespace gridcast
