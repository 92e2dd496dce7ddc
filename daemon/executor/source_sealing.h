// SourceSealing: at a source that reads its payload as it sends it (StreamedSource), the
// batches of chunk digests made a few batches ahead of what its connections ask for
// (docs/streamed-digests.md, section 4). The workers read and hash each batch's chunks, two
// batches at a time; on the io thread the batches are sealed in order (signed and logged by
// the DigestStream), their chunks become held and the senders wake. The payload's SHA-256 runs
// on the workers behind, in order; the last batch, which closes the list with it and the
// list's digest, waits for it. So the first byte waits for the first batch (1 MiB), not the
// payload, and a slow network never has the source read far ahead of what it sent.
// Everything on the io thread but the reads and hashes.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "common/crypto.h"
#include "daemon/executor/execution_context.h"

namespace gridcast {

class SourceSealing {
 public:
  // Batches sealed beyond the furthest one a connection asked for (DigestStream::Wanted).
  static constexpr uint64_t kSealedAhead = 4;
  // Batches read and hashed at once.
  static constexpr int kHashingAtOnce = 2;
  // The payload's SHA-256 reads at most this much per turn on a worker, so that hashing
  // batches is never queued behind it for long.
  static constexpr uint64_t kWholeBytesPerTurn = uint64_t{64} << 20;
  // A payload its sender still writes (PayloadStore::OpenStreamedFilling): how long a batch
  // not all written yet waits before it is read again. A sender that stops writing meets the
  // broadcast's stall timeout.
  static constexpr auto kUnwrittenPause = std::chrono::milliseconds(2);

  // REQUIRES: context.capabilities.streamed and context.digests.
  // `on_sealed` runs on the io thread after each batch's chunks became held.
  SourceSealing(ExecutionContext& context, std::function<void()> on_sealed);

  // Starts sealing; the digest stream's wants drive it from then on.
  void Start();

 private:
  // Hashes what the bound allows, seals what is ready in order, advances the SHA-256.
  void Pump();
  void Hash(uint64_t batch);
  boost::asio::awaitable<void> HashOnceWritten(uint64_t batch);
  void SealReady();
  void HashWhole();

  ExecutionContext& context_;
  StreamedSource& source_;
  DigestStream& digests_;
  const std::function<void()> on_sealed_;
  const WeakChecksums weak_;
  bool started_ = false;
  uint64_t next_to_hash_ = 0;
  int hashing_ = 0;
  std::map<uint64_t, StreamedSource::Hashed> hashed_;  // by batch, waiting to be sealed in order
  uint64_t sealed_ = 0;
  uint64_t hashed_end_bytes_ = 0;  // the end of the batches handed to the workers
  Sha256Stream list_fold_;  // the sealed batches' digests, in order (ChunkListDigest)
  bool whole_running_ = false;
  uint64_t whole_end_ = 0;  // how far the SHA-256 has read
  std::optional<Digest> whole_;
};

}  // namespace gridcast
