// ChunkVerification: where a received chunk is hashed against the plan's digest and stored
// (PayloadStore::StoreReceived), and the digest's cost policy that says on which thread.
//
// Handing a chunk to a worker costs more than XXH3 takes to hash it: a chunk received into its
// final pages (in place), or into a buffer whose store is one copy away (lent rank memory), is
// then verified on the io thread at once. Everything else goes to the worker pool. Where
// SHA-256 hashes best several at a time (HashesBestTogether), one worker at a time takes up to
// kChunksHashedTogether waiting chunks, batch after batch, so the chunks arriving while it
// hashes form the next batch (a lone chunk waits for nothing); else every chunk gets a worker.
// Bounded by the callers: each waiting chunk holds one of a connection's window of buffers.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "daemon/executor/execution_context.h"

namespace gridcast {

struct ParentConnection;  // chunk_intake.cc

// A chunk read off a parent connection, not verified yet: in `buffer`, or (buffer null) in
// its final pages `place`, claimed from the store's ChunkPlacement.
struct ReceivedFrame {
  std::shared_ptr<ParentConnection> from;
  FrameHeader header;
  std::shared_ptr<std::vector<uint8_t>> buffer;
  std::span<uint8_t> place;
};

class ChunkVerification {
 public:
  // On the io thread, once a chunk is verified and stored (`status` OK), or not (DataLoss: its
  // bytes are not the chunk's; Aborted: another connection receives it into place; anything
  // else: the store failed). `newly`: this write marked it.
  using Verified = std::function<void(ReceivedFrame frame, const Status& status, bool newly)>;

  ChunkVerification(ExecutionContext& context, Verified verified);

  // On the io thread: verifies and stores `frame` now or on the workers, as the policy says.
  void Verify(ReceivedFrame frame);

 private:
  // On a worker: verifies and stores waiting chunks, then tells the io thread.
  void DrainWaiting();

  ExecutionContext& context_;
  const Verified verified_;
  const bool hashes_faster_than_a_handoff_;
  const bool one_copy_writes_;  // StoreCapabilities::one_copy_writes
  const bool hashed_together_;
  std::mutex mutex_;
  std::deque<ReceivedFrame> waiting_;  // guarded by mutex_
  bool draining_ = false;              // a worker is in DrainWaiting; guarded by mutex_
};

}  // namespace gridcast
