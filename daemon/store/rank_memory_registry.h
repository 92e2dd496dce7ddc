// RankMemoryRegistry: this daemon's side of the rank-memory protocol
// (cluster/rank_memory_protocol.h). Local processes lend it their receive buffers for an
// in-memory payload they name; a Prepare that asks for it (PrepareRequest.into_registered_memory)
// binds the buffers lent for its payload, and the payload is then received into them
// (daemon/store/rank_memory.h) instead of into the memory directory.
//
// What keeps this safe: a process lends only its own memory (the kernel names the peer,
// SO_PEERCRED), the daemon checks at once that it can reach it, and writes only verified chunks
// within it; a loan binds to one payload once, and only one whose broadcast asked for lent
// memory; when the lender ends the loan (or its connection closes) the daemon stops writing
// before it answers. At most kMaxConnections processes at a time.
// Thread-safety: Bind() from any thread; the connections are served on the io thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "include/gridcast/result.h"
#include "daemon/store/rank_memory.h"

namespace gridcast {

class RankMemoryRegistry {
 public:
  static constexpr size_t kMaxConnections = 256;

  // Listens on the abstract unix socket `name` (RankMemorySocketName) of this network namespace.
  static Result<std::shared_ptr<RankMemoryRegistry>> Listen(boost::asio::io_context& io, const std::string& name);
  ~RankMemoryRegistry();

  // The buffers lent for payload `name` that are `size_bytes` long and not bound yet, bound now.
  std::vector<std::shared_ptr<ProcessRegion>> Bind(const std::string& name, uint64_t size_bytes);

  // Loans open now.
  size_t loans() const;

 private:
  struct Loan {
    std::string name;
    std::shared_ptr<ProcessRegion> region;
    bool bound = false;
  };
  using Socket = boost::asio::local::stream_protocol::socket;

  explicit RankMemoryRegistry(boost::asio::io_context& io) : acceptor_(io) {}
  static boost::asio::awaitable<void> AcceptForEver(std::shared_ptr<RankMemoryRegistry> self);
  // One lender's connection: its loan, from the request to its end.
  static boost::asio::awaitable<void> Serve(std::shared_ptr<RankMemoryRegistry> self, Socket socket);
  void Open(const std::shared_ptr<Loan>& loan);
  // Ends a loan: no write into it after this returns. Its reply flags (RankMemoryReply).
  uint8_t End(const std::shared_ptr<Loan>& loan);

  boost::asio::local::stream_protocol::acceptor acceptor_;
  size_t connections_ = 0;  // on the io thread
  mutable std::mutex mutex_;
  std::multimap<std::string, std::shared_ptr<Loan>> loans_;  // guarded by mutex_
};

}  // namespace gridcast
