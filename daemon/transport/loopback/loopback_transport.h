// The loopback transport: connections inside one process, for executor tests without sockets
// (and without the kernel's timing). A LoopbackNetwork is the "wire": transports made on it
// listen at names ("m0:1") and connect to each other through bounded in-memory pipes that
// carry exactly the bytes a TCP connection would (the same frames and handshake).
// Everything runs on one io_context: the network's.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/transport/connection.h"

namespace gridcast {

class LoopbackNetwork : public std::enable_shared_from_this<LoopbackNetwork> {
 public:
  // `pipe_bytes`: what one direction of a connection holds before the writer waits (a
  // socket's buffers).
  static std::shared_ptr<LoopbackNetwork> Create(boost::asio::io_context& io, size_t pipe_bytes = 256 << 10) {
    return std::shared_ptr<LoopbackNetwork>(new LoopbackNetwork(io, pipe_bytes));
  }
  boost::asio::io_context& io() { return io_; }
  size_t pipe_bytes() const { return pipe_bytes_; }

  // Thread-safe. Unavailable when the name is taken.
  Status Bind(const std::string& address, std::function<void(ConnectionPtr)> on_accept);
  void Unbind(const std::string& address);
  // The listener at `address`, or an empty function.
  std::function<void(ConnectionPtr)> ListenerAt(const std::string& address) const;

 private:
  LoopbackNetwork(boost::asio::io_context& io, size_t pipe_bytes) : io_(io), pipe_bytes_(pipe_bytes) {}

  boost::asio::io_context& io_;
  const size_t pipe_bytes_;
  mutable std::mutex mutex_;
  std::map<std::string, std::function<void(ConnectionPtr)>> listeners_;  // guarded by mutex_
};

struct LoopbackUplink;

class LoopbackTransport final : public DataTransport {
 public:
  // `upload_bytes_per_s` > 0: what the connections this transport opens write, together, goes
  // out at most that fast (a member's uplink, shared by its children); 0: as fast as it can.
  explicit LoopbackTransport(std::shared_ptr<LoopbackNetwork> network, double upload_bytes_per_s = 0);
  ~LoopbackTransport() override;

  // Unavailable ("connection refused") when nothing listens at `address`.
  boost::asio::awaitable<Result<ConnectionPtr>> Connect(std::string address,
                                                        std::chrono::milliseconds timeout) override;
  // True when nothing listens at `address`.
  boost::asio::awaitable<bool> Refuses(std::string address, std::chrono::milliseconds timeout) override;
  // `address` is a name; one that ends in ":0" is given the port 1 + the number of names bound.
  Result<uint16_t> Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) override;

 private:
  const std::shared_ptr<LoopbackNetwork> network_;
  const std::shared_ptr<LoopbackUplink> uplink_;  // null: unlimited
  std::string bound_;
};

}  // namespace gridcast
