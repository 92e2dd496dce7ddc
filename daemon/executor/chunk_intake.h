// ChunkIntake: every lane this member receives, from the parent's authenticated connection to
// the acknowledgement of each chunk. Per connection it reads a frame header, checks it against
// the plan (CheckParentFrame), reads the chunk straight into its final pages where the store
// offers a ChunkPlacement (in memory) or else into a pooled buffer, hands it to ChunkVerification, and
// answers ACK once the chunk is stored or NACK when its bytes were not the chunk's (the parent
// resends). A parent that sends more than its window waits, so a connection holds at most a
// window of buffers or claimed places. io thread only.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/buffer_pool.h"
#include "daemon/executor/chunk_verification.h"
#include "daemon/executor/execution_context.h"

namespace gridcast {

// The stream a parent connection carries: `stream` of `stream_count` of `lane`, from `parent`.
struct ParentStream {
  int lane = 0;
  int stream = 0;
  int stream_count = 1;
  int parent = 0;
};

// Whether `header`, read from the parent of `from`, belongs on it: a DATA, KEEPALIVE, (shared
// lanes) ASSIGN or (plans streaming digests) DIGESTS frame of this plan and lane; a DATA or
// ASSIGN frame for a chunk the stream carries, whose batch of digests `digests` holds (when the
// plan streams them), a DATA frame of the chunk's length and with the plan's digest of it, an
// ASSIGN only for a chunk the store holds, a DIGESTS frame naming a batch's first chunk.
// InvalidArgument naming what is wrong otherwise.
Status CheckParentFrame(const FrameHeader& header, const ParentStream& from, const PlanId& id, const Plan& plan,
                        const LaneSchedule& schedule, const PayloadStore& store, const DigestStream* digests);

class ChunkIntake {
 public:
  explicit ChunkIntake(ExecutionContext& context);

  // Receives `from` over `connection` (its handshake is done) until the connection ends.
  boost::asio::awaitable<void> Receive(ConnectionPtr connection, ParentStream from);
  // This member has looked through `batch` for chunks it holds already (KnownChunks): tells
  // every parent connection open now which of its chunks it holds (HELD frames). Only for a
  // member whose handshake said it finds held chunks later. Returns how many batches from the
  // first it has looked through now, every one of them (the workers finish out of order).
  uint64_t LookedThrough(uint64_t batch);
  // This member holds `lane`'s parent up: a chunk from it is being verified, or a reply to it
  // is not written yet (for ParentWatch: such a parent is not silent, it waits for this member).
  bool OwesParent(int lane);
  // The bytes from `lane`'s parent this host's kernel received on its open connections since
  // the last call (Connection::KernelBytesReceived); nullopt when none can tell.
  std::optional<uint64_t> KernelBytesSinceLast(int lane);
  // Closes the connections of `lane` from `parent`: this member moved to another parent (a
  // plan patch), and the old one, if alive, sends no more.
  void DropParent(int lane, int parent);

 private:
  // With what ChunkVerification made of a received chunk: the reply to queue.
  void OnVerified(ReceivedFrame frame, const Status& status, bool newly);
  // Queues `conn` a HELD frame for `batch`: which of its chunks this member holds now.
  void QueueHeld(ParentConnection& conn, uint64_t batch);
  // Writes the ACK, NACK and HELD frames of a parent connection as chunks are verified.
  boost::asio::awaitable<void> WriteReplies(std::shared_ptr<ParentConnection> conn);

  ExecutionContext& context_;
  const std::shared_ptr<BufferPool> buffers_;  // chunk buffers, reused
  ChunkVerification verification_;
  std::vector<std::weak_ptr<ParentConnection>> parents_;  // for LookedThrough, OwesParent, KernelBytesSinceLast
  std::vector<bool> looked_through_;  // by batch (LookedThrough), once one was
  uint64_t looked_through_below_ = 0;  // every batch below it was looked through
};

}  // namespace gridcast
