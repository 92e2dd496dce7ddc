// The data plane's transport seam (after Gloo's transport::Pair and UnboundBuffer): a
// DataTransport makes Connections, a Connection moves bytes and chunks. The handshake, the frames
// and the executor are written against these two interfaces only; each transport lives in a
// folder of its own: tcp/ (plain TCP, sendfile), tls/ (mutual TLS 1.3 over TCP) and loopback/
// (in one process, for tests without sockets).
//
// Thread-safety: a Connection and a DataTransport are used on the io_context's single thread;
// one Read and one write (Write or SendChunk) may be pending on a connection at a time.
// Lifetimes: the operations are coroutines; the memory a span names must stay valid until the
// awaitable completes (co_await it in the same expression), and everything else is taken by
// value (GCC 12 mishandles a co_await whose operands are conditional temporaries: name them).
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/chunk_ref.h"
#include "include/gridcast/result.h"

// Like GRIDCAST_RETURN_IF_ERROR, for coroutines returning awaitable<Status>.
#define GRIDCAST_CO_RETURN_IF_ERROR(expr)          \
  do {                                             \
    ::gridcast::Status gridcast_co_status_ = (expr); \
    if (!gridcast_co_status_.ok()) co_return gridcast_co_status_; \
  } while (0)

namespace gridcast {

// One data-plane connection. Errors come back as Status: Unavailable for a connection that
// closed or failed (the parent connects again), DeadlineExceeded when `timeout` passed with
// no progress, Unauthenticated when a secured transport found the peer is not who it says.
class Connection {
 public:
  virtual ~Connection() = default;

  // Reads exactly out.size() bytes.
  virtual boost::asio::awaitable<Status> Read(std::span<uint8_t> out, std::chrono::milliseconds timeout) = 0;
  // Writes `head`, then `body` (which may be empty), as one.
  virtual boost::asio::awaitable<Status> Write(std::span<const uint8_t> head, std::span<const uint8_t> body,
                                               std::chrono::milliseconds timeout) = 0;
  // Writes `head`, then the chunk's bytes: from a file without a copy through user space
  // where the transport can (sendfile over plain TCP).
  virtual boost::asio::awaitable<Status> SendChunk(std::span<const uint8_t> head, ChunkRef chunk,
                                                   std::chrono::milliseconds timeout) = 0;
  // Receives a chunk's bytes straight into `into` (a pooled buffer, or the payload's final
  // pages), calling `progress` as parts of it arrive (so a slow parent is told from a silent
  // one); `timeout` is per part.
  boost::asio::awaitable<Status> ReceiveChunk(std::span<uint8_t> into, std::chrono::milliseconds timeout,
                                              std::function<void()> progress);

  // OK when the peer proved to be the host of `data_address` (a secured transport's
  // certificate check); always OK where the transport proves no identity (the cluster
  // secret's handshake, handshake.h, does that on every transport).
  virtual Status CheckPeer(const std::string& data_address) = 0;
  // How many bytes from the peer this host's kernel has received on the connection, where the
  // transport can tell (TCP: tcpi_bytes_received); nullopt where it cannot. ReceiveChunk's
  // progress comes a part at a time, and a part takes seconds behind a slow link: this tells
  // such a link from a peer that stopped sending.
  virtual std::optional<uint64_t> KernelBytesReceived() { return std::nullopt; }
  // How many bytes sent on the connection the peer has acknowledged (TCP: tcpi_bytes_acked);
  // nullopt where the transport cannot tell.
  virtual std::optional<uint64_t> KernelBytesAcked() { return std::nullopt; }
  // Caps the kernel's sending rate on the connection, in payload bytes per second (TCP's
  // SO_MAX_PACING_RATE); a no-op where the transport cannot pace.
  virtual void CapSendRate(double /*bytes_per_s*/) {}
  // Who is at the other end, for log lines.
  virtual std::string PeerName() const = 0;
  virtual bool IsOpen() const = 0;
  // Closes at once; pending operations fail. Idempotent.
  virtual void Close() = 0;
};

using ConnectionPtr = std::shared_ptr<Connection>;

// Makes connections: Gloo's Device.
class DataTransport {
 public:
  virtual ~DataTransport() = default;
  // Connects to `address` ("host:port"); a secured transport also runs its handshake and
  // checks that the peer is that host (Unauthenticated otherwise).
  virtual boost::asio::awaitable<Result<ConnectionPtr>> Connect(std::string address,
                                                                std::chrono::milliseconds timeout) = 0;
  // Whether a connection to `address` is refused within `timeout` (nothing listens there: a
  // peer whose daemon does not run). False when it connects (the connection is closed at
  // once), times out or fails otherwise, and where the transport cannot tell.
  virtual boost::asio::awaitable<bool> Refuses(std::string address, std::chrono::milliseconds timeout);
  // Listens on `address` (port 0 picks one) and hands every accepted connection, secured, to
  // `on_accept` on the io thread. Returns the port.
  virtual Result<uint16_t> Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) = 0;
};

}  // namespace gridcast
