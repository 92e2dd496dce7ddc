#include "daemon/store/rank_memory_registry.h"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "cluster/rank_memory_protocol.h"

namespace gridcast {
namespace asio = boost::asio;
using Socket = asio::local::stream_protocol::socket;


namespace {

asio::awaitable<Result<RankMemoryRequest>> ReadRequest(Socket& socket) {
  std::array<uint8_t, kRankMemoryRequestHeaderBytes> header{};
  boost::system::error_code ec;
  co_await asio::async_read(socket, asio::buffer(header), asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Status::Unavailable("the lender closed its connection");
  Result<size_t> name_bytes = RankMemoryNameBytes(header);
  if (!name_bytes.ok()) co_return name_bytes.status();
  std::vector<uint8_t> name(*name_bytes);
  co_await asio::async_read(socket, asio::buffer(name), asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Status::Unavailable("the lender closed its connection");
  co_return DecodeRankMemoryRequest(header, name);
}

// GCC 12 destroys a temporary passed to a coroutine twice: callers name what they pass.
asio::awaitable<void> Reply(Socket& socket, const Status& status, uint8_t flags) {
  const std::vector<uint8_t> bytes =
      EncodeRankMemoryReply(RankMemoryReply{status, flags, static_cast<uint32_t>(getpid())});
  boost::system::error_code ec;
  co_await asio::async_write(socket, asio::buffer(bytes), asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

Result<std::shared_ptr<RankMemoryRegistry>> RankMemoryRegistry::Listen(asio::io_context& io,
                                                                       const std::string& name) {
  std::shared_ptr<RankMemoryRegistry> registry(new RankMemoryRegistry(io));
  // The leading NUL puts the name in the abstract namespace: no file, gone with the daemon.
  const asio::local::stream_protocol::endpoint endpoint(std::string(1, '\0') + name);
  boost::system::error_code ec;
  auto& acceptor = registry->acceptor_;
  if (acceptor.open(endpoint.protocol(), ec); !ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("cannot listen for lent memory on @" + name + ": " + ec.message());
  asio::co_spawn(io, AcceptForEver(registry), asio::detached);
  return registry;
}

asio::awaitable<void> RankMemoryRegistry::AcceptForEver(std::shared_ptr<RankMemoryRegistry> self) {
  for (;;) {
    boost::system::error_code ec;
    Socket socket = co_await self->acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) co_return;
    if (ec || self->connections_ >= kMaxConnections) continue;  // closed at once: the lender falls back
    ++self->connections_;
    asio::co_spawn(self->acceptor_.get_executor(), Serve(self, std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> RankMemoryRegistry::Serve(std::shared_ptr<RankMemoryRegistry> self, Socket socket) {
  struct Count {
    RankMemoryRegistry& registry;
    ~Count() { --registry.connections_; }
  } count{*self};
  ucred peer{};
  socklen_t peer_bytes = sizeof peer;
  if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &peer_bytes) != 0 || peer.pid <= 0) {
    co_return;
  }
  Result<RankMemoryRequest> request = co_await ReadRequest(socket);
  if (request.ok() && request->op != RankMemoryOp::kRegister) {
    request = Status::InvalidArgument("a connection lends a buffer before anything else");
  }
  if (!request.ok()) {
    // A lender that hung up hears nothing; one that spoke wrongly hears why.
    if (const Status refused = request.status(); refused.code() != StatusCode::kUnavailable) {
      co_await Reply(socket, refused, 0);
    }
    co_return;
  }
  auto loan = std::make_shared<Loan>();
  loan->name = request->name;
  loan->region = std::make_shared<ProcessRegion>(peer.pid, request->address, request->length);
  const Status reachable = loan->region->Probe();
  if (reachable.ok()) self->Open(loan);
  co_await Reply(socket, reachable, 0);
  if (!reachable.ok()) co_return;
  spdlog::debug("process {} lent {} bytes for {}", peer.pid, request->length, request->name);
  // The next request ends the loan, and so does anything else (a closed connection).
  Result<RankMemoryRequest> next = co_await ReadRequest(socket);
  const uint8_t flags = self->End(loan);
  const Status ended;
  if (next.ok() && next->op == RankMemoryOp::kRelease) co_await Reply(socket, ended, flags);
}

RankMemoryRegistry::~RankMemoryRegistry() = default;

void RankMemoryRegistry::Open(const std::shared_ptr<Loan>& loan) {
  std::lock_guard<std::mutex> lock(mutex_);
  loans_.emplace(loan->name, loan);
}

uint8_t RankMemoryRegistry::End(const std::shared_ptr<Loan>& loan) {
  bool bound = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto [it, end] = loans_.equal_range(loan->name); it != end; ++it) {
      if (it->second == loan) {
        loans_.erase(it);
        break;
      }
    }
    bound = loan->bound;
  }
  // Waits for a write in progress; none starts after it.
  loan->region->Close();
  uint8_t flags = 0;
  if (bound) flags |= RankMemoryReply::kBound;
  if (bound && loan->region->filled()) flags |= RankMemoryReply::kFilled;
  return flags;
}

std::vector<std::shared_ptr<ProcessRegion>> RankMemoryRegistry::Bind(const std::string& name, uint64_t size_bytes) {
  std::vector<std::shared_ptr<ProcessRegion>> regions;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto [it, end] = loans_.equal_range(name); it != end; ++it) {
    Loan& loan = *it->second;
    if (loan.bound || loan.region->length() != size_bytes) continue;
    loan.bound = true;
    regions.push_back(loan.region);
  }
  return regions;
}

size_t RankMemoryRegistry::loans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loans_.size();
}

}  // namespace gridcast
