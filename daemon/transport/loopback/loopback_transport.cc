#include "daemon/transport/loopback/loopback_transport.h"

#include <algorithm>
#include <charconv>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstring>
#include <deque>
#include <vector>

#include "common/file_io.h"
#include "daemon/transport/notifier.h"

namespace gridcast {

namespace asio = boost::asio;

// A member's uplink: writes take turns at its rate.
struct LoopbackUplink {
  explicit LoopbackUplink(double rate) : bytes_per_s(rate) {}
  const double bytes_per_s;
  std::chrono::steady_clock::time_point free_at = std::chrono::steady_clock::now();

  // Returns when `bytes` may go: after those written before them.
  asio::awaitable<void> Take(size_t bytes) {
    const auto now = std::chrono::steady_clock::now();
    const auto start = std::max(now, free_at);
    free_at = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(static_cast<double>(bytes) / bytes_per_s));
    if (start <= now) co_return;
    asio::steady_timer wait(co_await asio::this_coro::executor, start);
    boost::system::error_code ec;
    co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
};

namespace {

// One direction of a connection: a bounded byte queue, and what its reader and writer wait on.
struct Pipe {
  explicit Pipe(asio::io_context& io, size_t capacity) : capacity_bytes(capacity), changed(io) {}
  const size_t capacity_bytes;
  std::deque<uint8_t> bytes;
  bool closed = false;
  Notifier changed;  // bytes came or went, or the pipe closed

  void Notify() { changed.Notify(); }
  // Returns after Notify() or when `until` passes.
  asio::awaitable<void> Wait(std::chrono::steady_clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    co_await changed.Wait(std::max(left, std::chrono::milliseconds(1)));
  }
};

class LoopbackConnection final : public Connection {
 public:
  LoopbackConnection(std::shared_ptr<Pipe> in, std::shared_ptr<Pipe> out, std::string peer,
                     std::shared_ptr<LoopbackUplink> uplink = nullptr)
      : in_(std::move(in)), out_(std::move(out)), peer_(std::move(peer)), uplink_(std::move(uplink)) {}
  ~LoopbackConnection() override { Close(); }

  asio::awaitable<Status> Read(std::span<uint8_t> out, std::chrono::milliseconds timeout) override {
    size_t done = 0;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (done < out.size()) {
      if (!in_->bytes.empty()) {
        const size_t n = std::min(out.size() - done, in_->bytes.size());
        std::copy_n(in_->bytes.begin(), n, out.begin() + static_cast<ptrdiff_t>(done));
        in_->bytes.erase(in_->bytes.begin(), in_->bytes.begin() + static_cast<ptrdiff_t>(n));
        done += n;
        in_->Notify();  // room for the writer
        deadline = std::chrono::steady_clock::now() + timeout;
        continue;
      }
      if (in_->closed) co_return Status::Unavailable("read: connection closed");
      if (std::chrono::steady_clock::now() >= deadline) {
        Close();
        co_return Status::DeadlineExceeded("read timed out");
      }
      co_await in_->Wait(deadline);
    }
    co_return Status::Ok();
  }

  asio::awaitable<Status> Write(std::span<const uint8_t> head, std::span<const uint8_t> body,
                                std::chrono::milliseconds timeout) override {
    GRIDCAST_CO_RETURN_IF_ERROR(co_await Put(head, timeout));
    co_return co_await Put(body, timeout);
  }

  asio::awaitable<Status> SendChunk(std::span<const uint8_t> head, ChunkRef chunk,
                                    std::chrono::milliseconds timeout) override {
    if (chunk.in_memory()) co_return co_await Write(head, chunk.memory, timeout);
    GRIDCAST_CO_RETURN_IF_ERROR(co_await Put(head, timeout));
    std::vector<uint8_t> slice(std::min<uint64_t>(chunk.length, uint64_t{256} << 10));
    for (uint64_t done = 0; done < chunk.length;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(slice.size(), chunk.length - done));
      GRIDCAST_CO_RETURN_IF_ERROR(PreadFull(SystemFileIo(), chunk.fd, std::span(slice.data(), n), chunk.offset + done));
      GRIDCAST_CO_RETURN_IF_ERROR(co_await Put({slice.data(), n}, timeout));
      done += n;
    }
    co_return Status::Ok();
  }

  Status CheckPeer(const std::string&) override { return Status::Ok(); }
  std::string PeerName() const override { return peer_; }
  bool IsOpen() const override { return !out_->closed; }
  void Close() override {
    for (Pipe* pipe : {in_.get(), out_.get()}) {
      pipe->closed = true;
      pipe->Notify();
    }
  }

 private:
  asio::awaitable<Status> Put(std::span<const uint8_t> data, std::chrono::milliseconds timeout) {
    size_t done = 0;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (done < data.size()) {
      if (out_->closed) co_return Status::Unavailable("write: connection closed");
      const size_t room = out_->capacity_bytes - std::min(out_->capacity_bytes, out_->bytes.size());
      if (room > 0) {
        const size_t n = std::min(room, data.size() - done);
        if (uplink_) {
          co_await uplink_->Take(n);
          if (out_->closed) co_return Status::Unavailable("write: connection closed");
        }
        out_->bytes.insert(out_->bytes.end(), data.begin() + static_cast<ptrdiff_t>(done),
                           data.begin() + static_cast<ptrdiff_t>(done + n));
        done += n;
        out_->Notify();  // bytes for the reader
        deadline = std::chrono::steady_clock::now() + timeout;
        continue;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        Close();
        co_return Status::DeadlineExceeded("write timed out");
      }
      co_await out_->Wait(deadline);
    }
    co_return Status::Ok();
  }

  const std::shared_ptr<Pipe> in_, out_;
  const std::string peer_;
  const std::shared_ptr<LoopbackUplink> uplink_;
};

}  // namespace

Status LoopbackNetwork::Bind(const std::string& address, std::function<void(ConnectionPtr)> on_accept) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!listeners_.emplace(address, std::move(on_accept)).second) {
    return Status::Unavailable("cannot listen on " + address + ": address in use");
  }
  return Status::Ok();
}

void LoopbackNetwork::Unbind(const std::string& address) {
  std::lock_guard<std::mutex> lock(mutex_);
  listeners_.erase(address);
}

std::function<void(ConnectionPtr)> LoopbackNetwork::ListenerAt(const std::string& address) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = listeners_.find(address);
  return it == listeners_.end() ? nullptr : it->second;
}

LoopbackTransport::LoopbackTransport(std::shared_ptr<LoopbackNetwork> network, double upload_bytes_per_s)
    : network_(std::move(network)),
      uplink_(upload_bytes_per_s > 0 ? std::make_shared<LoopbackUplink>(upload_bytes_per_s) : nullptr) {}

LoopbackTransport::~LoopbackTransport() {
  if (!bound_.empty()) network_->Unbind(bound_);
}

asio::awaitable<bool> LoopbackTransport::Refuses(std::string address, std::chrono::milliseconds /*timeout*/) {
  co_return network_->ListenerAt(address) == nullptr;
}

asio::awaitable<Result<ConnectionPtr>> LoopbackTransport::Connect(std::string address,
                                                                  std::chrono::milliseconds) {
  std::function<void(ConnectionPtr)> listener = network_->ListenerAt(address);
  if (!listener) co_return Status::Unavailable("connect to " + address + ": connection refused");
  auto to_listener = std::make_shared<Pipe>(network_->io(), network_->pipe_bytes());
  auto from_listener = std::make_shared<Pipe>(network_->io(), network_->pipe_bytes());
  auto accepted = std::make_shared<LoopbackConnection>(to_listener, from_listener, "loopback peer of " + address);
  // As an accept would: after this side's connect returns.
  asio::post(network_->io(), [listener, accepted] { listener(accepted); });
  co_return ConnectionPtr(std::make_shared<LoopbackConnection>(from_listener, to_listener, address, uplink_));
}

Result<uint16_t> LoopbackTransport::Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("address '" + address + "' is not name:port");
  std::string name = address;
  uint16_t port = 0;
  const char* digits = address.c_str() + colon + 1;
  if (std::from_chars(digits, address.c_str() + address.size(), port).ptr != address.c_str() + address.size()) {
    return Status::InvalidArgument("address '" + address + "' has a bad port");
  }
  if (port == 0) {
    // The first free port from 1, as a kernel would pick one.
    for (port = 1; network_->ListenerAt(address.substr(0, colon + 1) + std::to_string(port)); ++port) {
    }
    name = address.substr(0, colon + 1) + std::to_string(port);
  }
  GRIDCAST_RETURN_IF_ERROR(network_->Bind(name, std::move(on_accept)));
  bound_ = name;
  return port;
}

}  // namespace gridcast
