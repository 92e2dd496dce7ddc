#include "daemon/executor/chunk_verification.h"

namespace gridcast {

namespace {
PayloadStore::ReceivedChunk ToStore(const ReceivedFrame& frame) {
  PayloadStore::ReceivedChunk chunk;
  chunk.chunk = frame.header.chunk;
  chunk.in_place = frame.buffer == nullptr;
  chunk.data = frame.buffer ? std::span<const uint8_t>(*frame.buffer) : frame.place;
  chunk.buffer = frame.buffer;
  return chunk;
}
}  // namespace

ChunkVerification::ChunkVerification(ExecutionContext& context, Verified verified)
    : context_(context),
      verified_(std::move(verified)),
      hashes_faster_than_a_handoff_(HashesFasterThanAHandoff(context.store->identity().digest)),
      one_copy_writes_(context.capabilities.one_copy_writes),
      hashed_together_(HashesBestTogether(context.store->identity().digest)) {}

void ChunkVerification::Verify(ReceivedFrame frame) {
  const bool one_copy_away = frame.buffer == nullptr || one_copy_writes_;
  if (hashes_faster_than_a_handoff_ && one_copy_away) {
    PayloadStore::ReceivedChunk chunk = ToStore(frame);
    context_.store->StoreReceived({&chunk, 1});
    verified_(std::move(frame), chunk.status, chunk.newly_verified);
    return;
  }
  bool start = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back(std::move(frame));
    if (hashed_together_) {
      start = !draining_;
      draining_ = true;
    }
  }
  if (start) context_.host.OnWorkers([this] { DrainWaiting(); });
}

void ChunkVerification::DrainWaiting() {
  for (;;) {
    std::vector<ReceivedFrame> batch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (!waiting_.empty() && batch.size() < kChunksHashedTogether) {
        batch.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
      }
      if (batch.empty()) {
        draining_ = false;
        return;
      }
    }
    std::vector<PayloadStore::ReceivedChunk> received;
    received.reserve(batch.size());
    for (const ReceivedFrame& frame : batch) received.push_back(ToStore(frame));
    context_.store->StoreReceived(received);
    context_.host.OnIo([this, batch = std::move(batch), received = std::move(received)]() mutable {
      for (size_t i = 0; i < batch.size(); ++i) {
        verified_(std::move(batch[i]), received[i].status, received[i].newly_verified);
      }
    });
    // Chunks hashed one by one go to as many workers as there are; those hashed together stay
    // with this one, so that the next batch fills while it hashes.
    if (!hashed_together_) return;
  }
}

}  // namespace gridcast
