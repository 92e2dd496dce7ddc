#include "daemon/executor/source_sealing.h"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace gridcast {

namespace asio = boost::asio;

SourceSealing::SourceSealing(ExecutionContext& context, std::function<void()> on_sealed)
    : context_(context),
      source_(*context.capabilities.streamed),
      digests_(*context.digests),
      on_sealed_(std::move(on_sealed)),
      weak_(context.store->identity().OffersReuse() ? WeakChecksums::kCompute : WeakChecksums::kSkip) {}

void SourceSealing::Start() {
  started_ = true;
  // Wants come from the senders on the io thread (DigestStream::Available).
  digests_.OnWanted([this] { Pump(); });
  Pump();
}

void SourceSealing::Pump() {
  if (!started_ || context_.host.Stopping()) return;
  const DigestBatches& rule = digests_.rule();
  const uint64_t bound = std::min(rule.count(), std::max(digests_.Wanted(), sealed_ + 1) + kSealedAhead);
  while (hashing_ < kHashingAtOnce && next_to_hash_ < bound) Hash(next_to_hash_++);
  HashWhole();
}

void SourceSealing::Hash(uint64_t batch) {
  const DigestBatches::Range range = digests_.rule().RangeOf(batch);
  ++hashing_;
  context_.host.OnWorkers([this, batch, range] {
    Result<StreamedSource::Hashed> hashed = source_.HashChunks(range.first, range.count, weak_);
    context_.host.OnIo([this, batch, range, hashed = std::move(hashed)]() mutable {
      if (!hashed.ok() && hashed.status().code() == StatusCode::kUnavailable) {
        return context_.host.Spawn(HashOnceWritten(batch));  // its sender has not written it all yet
      }
      --hashing_;
      if (!hashed.ok()) return context_.host.Fail(hashed.status());
      hashed_end_bytes_ = std::max(hashed_end_bytes_, std::min(context_.store->identity().size_bytes,
                                                               context_.store->ChunkOffset(range.first + range.count)));
      hashed_.emplace(batch, std::move(*hashed));
      SealReady();
      Pump();
    });
  });
}

asio::awaitable<void> SourceSealing::HashOnceWritten(uint64_t batch) {
  asio::steady_timer timer(context_.io, kUnwrittenPause);
  co_await timer.async_wait(asio::use_awaitable);
  --hashing_;  // the batch kept its place among those hashed at once meanwhile
  if (!context_.host.Stopping()) Hash(batch);
}

void SourceSealing::SealReady() {
  const DigestBatches& rule = digests_.rule();
  const size_t digest_bytes = DigestBytes(context_.store->identity().digest);
  for (auto next = hashed_.find(sealed_); next != hashed_.end(); next = hashed_.find(sealed_)) {
    const bool last = sealed_ + 1 == rule.count();
    if (last && !whole_) return;  // the closing needs the payload's SHA-256
    const DigestBatches::Range range = rule.RangeOf(sealed_);
    DigestBatch batch;
    batch.index = sealed_;
    batch.first_chunk = range.first;
    batch.kind = context_.store->identity().digest;
    batch.digests = std::move(next->second.digests);
    batch.weak = std::move(next->second.weak);
    hashed_.erase(next);
    for (const Digest& digest : batch.digests) list_fold_.Update({digest.data(), digest_bytes});
    if (last) batch.closing = DigestClosing{list_fold_.Finish(), *whole_};
    if (Status sealed = digests_.Seal(std::move(batch)); !sealed.ok()) return context_.host.Fail(sealed);
    if (Status held = source_.HoldSealed(range.first, range.count); !held.ok()) return context_.host.Fail(held);
    ++sealed_;
    context_.chunk_arrived.Notify();
    on_sealed_();
  }
}

void SourceSealing::HashWhole() {
  if (whole_ || whole_running_ || context_.host.Stopping()) return;
  const uint64_t end = std::min(hashed_end_bytes_, whole_end_ + kWholeBytesPerTurn);
  if (end == whole_end_ && end < context_.store->identity().size_bytes) return;  // waits for more batches
  whole_running_ = true;
  context_.host.OnWorkers([this, end] {
    Result<std::optional<Digest>> whole = source_.HashWholeUpTo(end);
    context_.host.OnIo([this, end, whole = std::move(whole)] {
      whole_running_ = false;
      if (!whole.ok()) return context_.host.Fail(whole.status());
      whole_end_ = end;
      if (*whole) {
        whole_ = **whole;
        return SealReady();
      }
      HashWhole();
    });
  });
}

}  // namespace gridcast
