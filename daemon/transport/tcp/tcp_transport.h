// The plain TCP transport: Asio sockets, chunks from a file sent with sendfile (the kernel
// hands the page-cache pages to the socket; no copy through user space). io thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "daemon/transport/connection.h"
#include "daemon/transport/tcp/tcp_socket.h"

namespace gridcast {

class TcpConnection final : public Connection, public std::enable_shared_from_this<TcpConnection> {
 public:
  explicit TcpConnection(boost::asio::ip::tcp::socket socket);

  boost::asio::awaitable<Status> Read(std::span<uint8_t> out, std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<Status> Write(std::span<const uint8_t> head, std::span<const uint8_t> body,
                                       std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<Status> SendChunk(std::span<const uint8_t> head, ChunkRef chunk,
                                           std::chrono::milliseconds timeout) override;
  Status CheckPeer(const std::string&) override { return Status::Ok(); }
  std::optional<uint64_t> KernelBytesReceived() override;
  std::optional<uint64_t> KernelBytesAcked() override;
  void CapSendRate(double bytes_per_s) override;
  std::string PeerName() const override;
  bool IsOpen() const override { return socket_.is_open(); }
  void Close() override;

 private:
  // Closes the socket when `timeout` passes first.
  Deadline DeadlineAfter(std::chrono::milliseconds timeout);
  boost::asio::awaitable<Status> SendFileRange(std::span<const uint8_t> head, ChunkRef chunk,
                                               std::chrono::milliseconds timeout);

  boost::asio::ip::tcp::socket socket_;
};

class TcpTransport final : public DataTransport {
 public:
  TcpTransport(boost::asio::io_context& io, TcpOptions options);
  ~TcpTransport() override;

  boost::asio::awaitable<Result<ConnectionPtr>> Connect(std::string address,
                                                        std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<bool> Refuses(std::string address, std::chrono::milliseconds timeout) override;
  Result<uint16_t> Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) override;

 private:
  boost::asio::io_context& io_;
  const TcpOptions options_;
  std::shared_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
};

}  // namespace gridcast
