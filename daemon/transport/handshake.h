// The data plane's handshake, both sides (frame.h has the messages). The parent connects; the
// child sends a challenge; the parent answers with its place in the plan (Hello) and an HMAC
// over the challenge with the cluster secret; the child checks it, and that the parent is its
// parent in that lane, and answers with its own HMAC and the runs of chunks it already holds (Accept),
// or refuses with a status and a reason. Neither side reveals anything before the other
// proved the secret. It runs on any DataTransport (connection.h); over TLS it runs inside a
// mutual TLS 1.3 session, and each side also checks that the other's certificate names the
// member it is: the parent the child's data host (at Connect), the child the data host of the
// parent its Hello names (Connection::CheckPeer).
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "include/gridcast/result.h"
#include "daemon/transport/connection.h"
#include "daemon/transport/frame.h"

namespace gridcast {

// Whoever takes a plan's lane from an authenticated parent: a plan's execution. The data plane
// knows receivers only through this.
class LaneReceiver {
 public:
  virtual ~LaneReceiver() = default;
  // OK when `hello.parent` is this member's parent in `hello.lane` and the stream is one the
  // plan has on that edge.
  virtual Status CheckParent(const Hello& hello) const = 0;
  // The data address ("host:port") of member `member` of the plan, a valid index.
  virtual std::string DataAddressOf(uint32_t member) const = 0;
  // Runs of verified chunks, from the first, at most kMaxAcceptHeldRuns: what the parent need
  // not send.
  virtual std::vector<ChunkRun> HeldRuns() const = 0;
  // Whether this member looks for chunks it holds already (an earlier attempt's, an earlier
  // copy's) as their digests arrive: then a parent sends no chunk of a batch of digests before
  // the child's HELD frame for that batch.
  virtual bool FindsHeldChunksLater() const { return false; }
  // Receive the lane over `connection` (the handshake is done).
  virtual void AdoptParentConnection(ConnectionPtr connection, const Hello& hello) = 0;
};

using ReceiverLookup = std::function<std::shared_ptr<LaneReceiver>(const PlanId&)>;

// What a child's handshake says it holds.
struct ChildHolds {
  std::vector<ChunkRun> runs;  // increasing, apart
  bool finds_later = false;   // LaneReceiver::FindsHeldChunksLater

  bool Holds(uint64_t chunk) const;
};

// Parent side on a connection to the child. `hello` names the plan, lane, parent and stream;
// its nonce and MAC are filled here. Returns which of the plan's `num_chunks` chunks the
// child says it holds. A refusal comes back with the child's status code and reason; a failed
// authentication is Unauthenticated; a child of another data protocol version is
// FailedPrecondition.
boost::asio::awaitable<Result<ChildHolds>> HandshakeAsParent(ConnectionPtr connection, const std::string& secret,
                                                             Hello hello, uint64_t num_chunks,
                                                             std::chrono::milliseconds timeout);

// Child side on an accepted connection: challenges the parent, authenticates it, finds the
// plan with `lookup`, asks it whether this parent belongs, and answers. Returns the receiver
// and the parent's Hello once accepted; any refusal is logged and the connection closed.
boost::asio::awaitable<Result<std::pair<std::shared_ptr<LaneReceiver>, Hello>>> HandshakeAsChild(
    ConnectionPtr connection, const std::string& secret, const ReceiverLookup& lookup,
    std::chrono::milliseconds timeout);

}  // namespace gridcast
