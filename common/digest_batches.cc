#include "common/digest_batches.h"

#include <algorithm>
#include <cstring>

#include "common/big_endian.h"

namespace gridcast {
namespace {

constexpr std::string_view kBatchContext = "gridcast-digests-1";
// index, first chunk, count, kind, flags
constexpr size_t kBatchFieldBytes = 8 + 8 + 4 + 1 + 1;
constexpr uint8_t kHasWeak = 1;
constexpr uint8_t kHasClosing = 2;
constexpr size_t kClosingBytes = 2 * sizeof(Digest);

void Put(std::string& out, uint64_t value, int bytes) {
  uint8_t encoded[8];
  StoreBigEndian(encoded, value, bytes);
  out.append(reinterpret_cast<const char*>(encoded), static_cast<size_t>(bytes));
}
uint64_t Get(std::string_view in, size_t at, int bytes) {
  return LoadBigEndian(reinterpret_cast<const uint8_t*>(in.data() + at), bytes);
}

// The encoding without its signature: what is signed, after the context and the plan id.
std::string BatchFields(const DigestBatch& batch) {
  const size_t digest_bytes = DigestBytes(batch.kind);
  std::string out;
  out.reserve(kBatchFieldBytes + batch.digests.size() * (digest_bytes + 4) + kClosingBytes + sizeof(Signature));
  Put(out, batch.index, 8);
  Put(out, batch.first_chunk, 8);
  Put(out, batch.digests.size(), 4);
  out.push_back(static_cast<char>(batch.kind));
  out.push_back(static_cast<char>((batch.weak.empty() ? 0 : kHasWeak) | (batch.closing ? kHasClosing : 0)));
  for (const Digest& digest : batch.digests) out.append(reinterpret_cast<const char*>(digest.data()), digest_bytes);
  for (uint32_t weak : batch.weak) Put(out, weak, 4);
  if (batch.closing) {
    out.append(reinterpret_cast<const char*>(batch.closing->chunk_list_digest.data()), sizeof(Digest));
    out.append(reinterpret_cast<const char*>(batch.closing->payload_sha256.data()), sizeof(Digest));
  }
  return out;
}

std::string Signed(std::string_view context, const PlanId& plan, std::string_view fields) {
  std::string message(context);
  message.append(reinterpret_cast<const char*>(plan.bytes().data()), plan.bytes().size());
  message.append(fields);
  return message;
}

std::span<const uint8_t> Bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

}  // namespace

void DigestBatches::MakeRamp(uint64_t chunk_bytes, uint64_t max_batch_bytes) {
  auto chunks_for = [&](uint64_t bytes) {
    return static_cast<uint32_t>(std::clamp<uint64_t>(bytes / std::max<uint64_t>(chunk_bytes, 1), 1, kMaxChunksPerBatch));
  };
  steady_ = chunks_for(max_batch_bytes);
  for (uint64_t bytes = kFirstBatchBytes; bytes < max_batch_bytes; bytes *= 2) {
    const uint32_t n = chunks_for(bytes);
    if (n == steady_) break;
    ramp_.push_back(n);
  }
}

DigestBatches::DigestBatches(uint64_t chunk_bytes, uint64_t chunks, uint64_t max_batch_bytes) {
  MakeRamp(chunk_bytes, max_batch_bytes);
  AddSegment(chunks);
}

DigestBatches::DigestBatches(uint64_t chunk_bytes, std::span<const uint64_t> segment_chunks, uint64_t max_batch_bytes)
    : closes_list_(false) {
  MakeRamp(chunk_bytes, max_batch_bytes);
  for (const uint64_t chunks : segment_chunks) AddSegment(chunks);
}

void DigestBatches::AddSegment(uint64_t chunks) {
  Segment& segment = segments_.emplace_back();
  segment.first_chunk = chunks_;
  segment.chunks = chunks;
  segment.first_batch = batches_;
  for (const uint32_t n : ramp_) {
    if (segment.ramp_chunks >= chunks) break;
    segment.ramp_chunks += n;
    ++segment.ramp_batches;
  }
  uint64_t batches = segment.ramp_batches;
  if (segment.ramp_chunks < chunks) batches += (chunks - segment.ramp_chunks + steady_ - 1) / steady_;
  chunks_ += chunks;
  batches_ += batches;
}

const DigestBatches::Segment& DigestBatches::Find(uint64_t key, uint64_t Segment::*field) const {
  const auto after = std::upper_bound(segments_.begin(), segments_.end(), key,
                                      [field](uint64_t k, const Segment& segment) { return k < segment.*field; });
  return *(after - 1);
}

uint64_t DigestBatches::BatchOf(uint64_t chunk) const {
  const Segment& segment = Find(chunk, &Segment::first_chunk);
  const uint64_t local = chunk - segment.first_chunk;
  uint64_t first = 0;
  for (uint64_t i = 0; i < segment.ramp_batches; ++i) {
    if (local < first + ramp_[i]) return segment.first_batch + i;
    first += ramp_[i];
  }
  return segment.first_batch + segment.ramp_batches + (local - segment.ramp_chunks) / steady_;
}

DigestBatches::Range DigestBatches::RangeOf(uint64_t batch) const {
  const Segment& segment = Find(batch, &Segment::first_batch);
  const uint64_t local = batch - segment.first_batch;
  uint64_t first = 0;
  uint64_t count = 0;
  if (local < segment.ramp_batches) {
    for (uint64_t i = 0; i < local; ++i) first += ramp_[i];
    count = ramp_[local];
  } else {
    first = segment.ramp_chunks + (local - segment.ramp_batches) * steady_;
    count = steady_;
  }
  return {segment.first_chunk + first, static_cast<uint32_t>(std::min(count, segment.chunks - first))};
}

size_t DigestBatches::SegmentOf(uint64_t batch) const {
  return static_cast<size_t>(&Find(batch, &Segment::first_batch) - segments_.data());
}

void SignDigestBatch(const SigningKey& key, const PlanId& plan, DigestBatch& batch) {
  batch.signature = key.Sign(Bytes(Signed(kBatchContext, plan, BatchFields(batch))));
}

std::string EncodeDigestBatch(const DigestBatch& batch) {
  std::string out = BatchFields(batch);
  out.append(reinterpret_cast<const char*>(batch.signature.data()), batch.signature.size());
  return out;
}

size_t MaxEncodedDigestBatchBytes() {
  return kBatchFieldBytes + kMaxChunksPerBatch * (32 + 4) + kClosingBytes + sizeof(Signature);
}

Result<DigestBatch> DecodeDigestBatch(std::string_view bytes, ChunkDigest kind) {
  if (bytes.size() < kBatchFieldBytes + sizeof(Signature)) return Status::InvalidArgument("digest batch too short");
  DigestBatch batch;
  batch.index = Get(bytes, 0, 8);
  batch.first_chunk = Get(bytes, 8, 8);
  const auto count = static_cast<uint32_t>(Get(bytes, 16, 4));
  const uint8_t kind_value = static_cast<uint8_t>(bytes[20]);
  const uint8_t flags = static_cast<uint8_t>(bytes[21]);
  if (kind_value != static_cast<uint8_t>(kind)) {
    return Status::InvalidArgument("digest batch of digest " + std::to_string(kind_value) + ", not the plan's " +
                                   std::string(DigestName(kind)));
  }
  batch.kind = kind;
  if (count == 0 || count > kMaxChunksPerBatch) {
    return Status::InvalidArgument("digest batch of " + std::to_string(count) + " chunks (1 to " +
                                   std::to_string(kMaxChunksPerBatch) + ")");
  }
  if ((flags & ~(kHasWeak | kHasClosing)) != 0) return Status::InvalidArgument("digest batch with unknown flags");
  const size_t digest_bytes = DigestBytes(kind);
  const size_t weak_bytes = (flags & kHasWeak) ? 4 : 0;
  const size_t closing_bytes = (flags & kHasClosing) ? kClosingBytes : 0;
  const size_t expected = kBatchFieldBytes + count * (digest_bytes + weak_bytes) + closing_bytes + sizeof(Signature);
  if (bytes.size() != expected) {
    return Status::InvalidArgument("digest batch of " + std::to_string(bytes.size()) + " bytes where " +
                                   std::to_string(count) + " chunks make " + std::to_string(expected));
  }
  size_t at = kBatchFieldBytes;
  batch.digests.resize(count);
  for (Digest& digest : batch.digests) {
    std::memcpy(digest.data(), bytes.data() + at, digest_bytes);
    at += digest_bytes;
  }
  if (weak_bytes > 0) {
    batch.weak.resize(count);
    for (uint32_t& weak : batch.weak) {
      weak = static_cast<uint32_t>(Get(bytes, at, 4));
      at += 4;
    }
  }
  if (closing_bytes > 0) {
    DigestClosing& closing = batch.closing.emplace();
    std::memcpy(closing.chunk_list_digest.data(), bytes.data() + at, sizeof(Digest));
    std::memcpy(closing.payload_sha256.data(), bytes.data() + at + sizeof(Digest), sizeof(Digest));
    at += closing_bytes;
  }
  std::memcpy(batch.signature.data(), bytes.data() + at, batch.signature.size());
  return batch;
}

Status VerifyDigestBatch(const PublicKey& key, const PlanId& plan, const DigestBatches& rule, bool weak_expected,
                         const DigestBatch& batch) {
  const std::string where = "digest batch " + std::to_string(batch.index);
  if (batch.index >= rule.count()) {
    return Status::DataLoss(where + " is past the payload's " + std::to_string(rule.count()) + " batches");
  }
  const DigestBatches::Range range = rule.RangeOf(batch.index);
  if (batch.first_chunk != range.first || batch.digests.size() != range.count) {
    return Status::DataLoss(where + " holds chunks " + std::to_string(batch.first_chunk) + " (" +
                            std::to_string(batch.digests.size()) + " of them), not " + std::to_string(range.first) +
                            " (" + std::to_string(range.count) + ")");
  }
  if (weak_expected != !batch.weak.empty() || (!batch.weak.empty() && batch.weak.size() != batch.digests.size())) {
    return Status::DataLoss(where + (weak_expected ? " lacks" : " has") + " weak checksums");
  }
  const bool last = rule.Closes(batch.index);
  if (last != batch.closing.has_value()) {
    return Status::DataLoss(where + (last ? " is the last and does not close the list" : " closes the list early"));
  }
  if (!VerifySignature(key, Bytes(Signed(kBatchContext, plan, BatchFields(batch))), batch.signature)) {
    return Status::DataLoss(where + " is not signed by the broadcast's source");
  }
  return Status::Ok();
}

}  // namespace gridcast
