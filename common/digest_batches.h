// Chunk digests in signed batches: how a source tells its members each chunk's digest while
// it sends, instead of one list at Prepare (docs/streamed-digests.md).
//
// DigestBatches is the rule cutting a payload's chunks into batches, computed alike by the
// source and every member from the chunk size and count: the first batch covers 1 MiB of
// payload and each next one twice the one before, up to `max_batch_bytes` (16 MiB); a batch
// holds at least 1 and at most kMaxChunksPerBatch chunks. Small first batches let the first
// chunk go out as soon as 1 MiB is hashed; larger ones later keep the signatures rare.
//
// A DigestBatch carries its chunks' digests (and their weak checksums when members search an
// earlier copy), signed with the broadcast's key over the plan id and the batch's place, so a
// batch cannot be altered, moved to another place or replayed into another plan. The last
// batch also closes the list (DigestClosing): the chunk-list digest (ChunkListDigest of every
// batch's digests in order) and the payload's SHA-256, under the same signature. A source
// that reads its payload as it sends it knows both only then, and every member needs the last
// batch anyway, so no other message has to reach every member.
// Pure functions and values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/chunk_digest.h"
#include "common/ids.h"
#include "common/signing.h"
#include "include/gridcast/result.h"

namespace gridcast {

inline constexpr uint64_t kFirstBatchBytes = uint64_t{1} << 20;
inline constexpr uint64_t kDefaultMaxBatchBytes = uint64_t{16} << 20;
inline constexpr uint32_t kMaxChunksPerBatch = 1024;

class DigestBatches {
 public:
  struct Range {
    uint64_t first = 0;  // chunk
    uint32_t count = 0;
    friend bool operator==(const Range&, const Range&) = default;
  };

  // REQUIRES: max_batch_bytes >= kFirstBatchBytes (a chunk size of 0 counts as 1).
  DigestBatches(uint64_t chunk_bytes, uint64_t chunks, uint64_t max_batch_bytes = kDefaultMaxBatchBytes);
  // Segments of `segment_chunks` chunks back to back, each cut as a payload of its own (its
  // first batch 1 MiB): no batch crosses from one segment into the next. An allgather's parts
  // are its segments, each signed by the member that holds it.
  DigestBatches(uint64_t chunk_bytes, std::span<const uint64_t> segment_chunks,
                uint64_t max_batch_bytes = kDefaultMaxBatchBytes);

  uint64_t count() const { return batches_; }
  uint64_t chunks() const { return chunks_; }
  size_t segments() const { return segments_.size(); }
  // REQUIRES: chunk < chunks().
  uint64_t BatchOf(uint64_t chunk) const;
  // The chunks of `batch`. REQUIRES: batch < count().
  Range RangeOf(uint64_t batch) const;
  // The segment `batch` is in. REQUIRES: batch < count().
  size_t SegmentOf(uint64_t batch) const;
  // Whether the last batch closes the list (DigestClosing): in a payload of one source, not
  // one cut in segments (no holder of one knows the others' digests).
  bool ClosesList() const { return closes_list_; }
  bool Closes(uint64_t batch) const { return closes_list_ && batch + 1 == batches_; }

 private:
  struct Segment {
    uint64_t first_chunk = 0;
    uint64_t chunks = 0;
    uint64_t first_batch = 0;
    uint64_t ramp_batches = 0;  // its first batches, as the ramp cuts them
    uint64_t ramp_chunks = 0;   // chunks in those
  };
  void MakeRamp(uint64_t chunk_bytes, uint64_t max_batch_bytes);
  void AddSegment(uint64_t chunks);
  // The segment holding `key` (a chunk or a batch, by `field`): the last that starts at or
  // before it (empty segments start where the next one does).
  const Segment& Find(uint64_t key, uint64_t Segment::*field) const;

  // The ramp: batch i < ramp_.size() of a segment holds ramp_[i] chunks, and every later one steady_.
  std::vector<uint32_t> ramp_;
  uint32_t steady_ = 1;
  std::vector<Segment> segments_;
  uint64_t chunks_ = 0;
  uint64_t batches_ = 0;
  bool closes_list_ = true;
};

struct DigestClosing {
  Digest chunk_list_digest{};
  Digest payload_sha256{};
  friend bool operator==(const DigestClosing&, const DigestClosing&) = default;
};

struct DigestBatch {
  uint64_t index = 0;
  uint64_t first_chunk = 0;
  ChunkDigest kind = ChunkDigest::kSha256;
  std::vector<Digest> digests;  // one per chunk of the batch, in order
  std::vector<uint32_t> weak;   // empty, or one per chunk: their weak checksums
  std::optional<DigestClosing> closing;  // the last batch's, only
  Signature signature{};
};

// Signs `batch` (its signature is set) for `plan`.
void SignDigestBatch(const SigningKey& key, const PlanId& plan, DigestBatch& batch);

// A batch as a DIGESTS frame carries it: index, first chunk, count, kind, flags (weak
// checksums follow, a closing follows), the digests (DigestBytes(kind) each), the weak
// checksums, the closing's two digests, the signature.
std::string EncodeDigestBatch(const DigestBatch& batch);
// InvalidArgument for bytes that are not one batch of `kind` of at most kMaxChunksPerBatch
// chunks, naming what is wrong. Says nothing of who made it: VerifyDigestBatch does.
Result<DigestBatch> DecodeDigestBatch(std::string_view bytes, ChunkDigest kind);
// Largest EncodeDigestBatch: what a frame's length may be.
size_t MaxEncodedDigestBatchBytes();

// DataLoss unless `batch` is the one `rule` puts at its index (first chunk and count), with
// weak checksums exactly when `weak_expected` and a closing exactly when it is the last,
// signed by `key` for `plan`.
Status VerifyDigestBatch(const PublicKey& key, const PlanId& plan, const DigestBatches& rule, bool weak_expected,
                         const DigestBatch& batch);
}  // namespace gridcast
