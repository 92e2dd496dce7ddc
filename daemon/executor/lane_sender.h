// LaneSender: one stream of one lane from this member to one child: it opens the connection
// (the parent's side of the handshake: the child's bitmap says what it holds already, and its
// HELD frames what it finds it holds later), hands
// over the lane's chunks in the lane's order as this member holds them, at most a window of
// them unacknowledged, resends what the child refused, carries each chunk's signed batch of
// digests ahead of it (DigestStream) where the plan streams them, tells the child it is alive
// while it waits (keepalives), and reconnects after a lost connection until every chunk it carries is
// acknowledged or the execution stops. Chunks are sent from the store (ChunkAt: the file's page
// cache or the mapped pages), so a lagging child costs no buffer. io thread only.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <set>

#include "daemon/executor/execution_context.h"

namespace gridcast {

// Runs `attempt` (one connection to a child, start to end) until it succeeds, the execution
// stops or `given_up()` says so, waiting an eighth of the reconnect delay after a failure,
// doubling up to the reconnect delay while attempts keep failing at once. A child refused
// for good (another secret, certificate or data protocol version) fails the execution instead.
// `what` names the edge in the debug log.
boost::asio::awaitable<void> RunReconnecting(ExecutionContext& context, const std::string& what,
                                             const std::function<boost::asio::awaitable<Status>()>& attempt,
                                             const std::function<bool()>& given_up = {});

class LaneSender {
 public:
  // Sends stream `stream` of `stream_count` of `lane` to member `child`.
  LaneSender(ExecutionContext& context, int lane, int child, int stream, int stream_count);

  // Returns once the child holds every chunk this stream carries, the execution stops, Stop()
  // was called, or it failed in a way that reconnecting does not heal (then the execution
  // fails, naming the child).
  boost::asio::awaitable<void> Run();
  // The child moved to another parent (a plan patch): closes the connection, and Run returns.
  void Stop();
  // Caps the rate of its connection to the child, in payload bytes per second, now and after
  // a reconnection (a lane's source: SendPacing, send_pacing.h).
  void CapSendRate(double bytes_per_s);
  // The bytes the child acknowledged on the connection open now since the last call; 0
  // without one, or where the transport cannot tell.
  uint64_t AckedSinceLast();
  bool Connected() const { return !current_.expired(); }
  // With a connection open: the position in the lane's log up to which this stream's chunks
  // were handed over, less those not acknowledged yet (a window at most).
  std::optional<uint64_t> AckedPosition() const;
  double send_cap() const { return send_cap_; }
  int lane() const { return lane_; }
  int child() const { return child_; }
  int stream_count() const { return stream_count_; }

 private:
  struct Connection;

  // One connection to the child, from the dial to its last acknowledgement.
  boost::asio::awaitable<Status> SendOnce();
  // One chunk, counted: a resend when `again` (the child refused it) or when a connection
  // to the child ended with it unacknowledged.
  boost::asio::awaitable<Status> SendChunk(Connection& conn, uint64_t chunk, bool again = false);
  // Before any frame about the chunk at `position` of the lane's log: its batch of digests,
  // unless this connection carried it (of the last kBatchesRemembered), once this member holds
  // it, and the batches of the next chunks of this stream that this member holds, a few ahead.
  boost::asio::awaitable<Status> SendBatchOf(Connection& conn, uint64_t position);
  // One DIGESTS frame, unless this connection carried the batch. REQUIRES: Available(batch).
  boost::asio::awaitable<Status> SendBatch(Connection& conn, uint64_t batch);
  // A frame without payload: a keepalive, or (shared lanes) a chunk the child holds assigned to
  // the lane.
  boost::asio::awaitable<Status> SendHeader(Connection& conn, FrameType type, uint64_t chunk);
  // Returns once `ready()`, telling the child meanwhile that its parent is alive.
  boost::asio::awaitable<Status> WaitUntil(Connection& conn, const std::function<bool()>& ready);
  // Returns once the connection can take one more chunk; resends what the child refused.
  boost::asio::awaitable<Status> WaitForWindow(Connection& conn);
  // Reads the ACK, NACK and HELD frames the child sends back, until the connection ends.
  boost::asio::awaitable<void> ReadAcks(std::shared_ptr<Connection> conn);
  // The bits of a HELD frame whose header is `header`: chunks of a batch the child found it holds.
  boost::asio::awaitable<Result<FrameHeader>> ReadHeld(Connection& conn, const FrameHeader& header);
  // For a child that finds held chunks later: returns once its HELD frame for `chunk`'s batch
  // came; DeadlineExceeded after the I/O timeout without it.
  boost::asio::awaitable<Status> WaitUntilLookedThrough(Connection& conn, uint64_t chunk);

  ExecutionContext& context_;
  const int lane_;
  const int child_;
  const int stream_;
  const int stream_count_;
  PeerTraffic* const traffic_;  // the daemon's counters of bytes to this child, if any
  // Chunks sent on an earlier connection and not acknowledged there (at most a window).
  std::set<uint64_t> lost_in_flight_;
  bool stopped_ = false;
  std::weak_ptr<Connection> current_;  // the connection open now, if any
  double send_cap_ = 0;                // CapSendRate's; 0: none
  std::weak_ptr<Connection> acked_on_;  // the connection AckedSinceLast last read
  uint64_t acked_seen_ = 0;            // ... and what it had acknowledged then
};

}  // namespace gridcast
