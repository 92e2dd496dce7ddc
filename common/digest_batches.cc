#include "common/digest_batches.h"

#include <algorithm>
#include <cstring>

#include "common/big_endian.h"

namespace gridcast {
namespace {

constexpr std::string_view kBatchContext = "gridcast-digests-1";
constexpr std::string_view kTrailerContext = "gridcast-trailer-1";
// index, first chunk, count, kind, flags
constexpr size_t kBatchFieldBytes = 8 + 8 + 4 + 1 + 1;
constexpr uint8_t kHasWeak = 1;

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
  out.reserve(kBatchFieldBytes + batch.digests.size() * (digest_bytes + 4) + sizeof(Signature));
  Put(out, batch.index, 8);
  Put(out, batch.first_chunk, 8);
  Put(out, batch.digests.size(), 4);
  out.push_back(static_cast<char>(batch.kind));
  out.push_back(static_cast<char>(batch.weak.empty() ? 0 : kHasWeak));
  for (const Digest& digest : batch.digests) out.append(reinterpret_cast<const char*>(digest.data()), digest_bytes);
  for (uint32_t weak : batch.weak) Put(out, weak, 4);
  return out;
}

std::string TrailerFields(const DigestTrailer& trailer) {
  std::string out;
  Put(out, trailer.chunks, 8);
  out.append(reinterpret_cast<const char*>(trailer.chunk_list_digest.data()), trailer.chunk_list_digest.size());
  out.append(reinterpret_cast<const char*>(trailer.payload_sha256.data()), trailer.payload_sha256.size());
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

DigestBatches::DigestBatches(uint64_t chunk_bytes, uint64_t chunks, uint64_t max_batch_bytes) : chunks_(chunks) {
  auto chunks_for = [&](uint64_t bytes) {
    return static_cast<uint32_t>(std::clamp<uint64_t>(bytes / std::max<uint64_t>(chunk_bytes, 1), 1, kMaxChunksPerBatch));
  };
  steady_ = chunks_for(max_batch_bytes);
  for (uint64_t bytes = kFirstBatchBytes; bytes < max_batch_bytes; bytes *= 2) {
    const uint32_t n = chunks_for(bytes);
    if (n == steady_) break;
    ramp_.push_back(n);
  }
  for (uint32_t n : ramp_) {
    if (ramp_chunks_ >= chunks_) break;
    ramp_chunks_ += n;
    ++batches_;
  }
  if (ramp_chunks_ >= chunks_) {
    ramp_.resize(batches_);
  } else {
    batches_ += (chunks_ - ramp_chunks_ + steady_ - 1) / steady_;
  }
}

uint64_t DigestBatches::BatchOf(uint64_t chunk) const {
  uint64_t first = 0;
  for (size_t i = 0; i < ramp_.size(); ++i) {
    if (chunk < first + ramp_[i]) return i;
    first += ramp_[i];
  }
  return ramp_.size() + (chunk - ramp_chunks_) / steady_;
}

DigestBatches::Range DigestBatches::RangeOf(uint64_t batch) const {
  uint64_t first = 0;
  uint64_t count = 0;
  if (batch < ramp_.size()) {
    for (size_t i = 0; i < batch; ++i) first += ramp_[i];
    count = ramp_[batch];
  } else {
    first = ramp_chunks_ + (batch - ramp_.size()) * steady_;
    count = steady_;
  }
  return {first, static_cast<uint32_t>(std::min(count, chunks_ - first))};
}

void SignDigestBatch(const SigningKey& key, const PlanId& plan, DigestBatch& batch) {
  batch.signature = key.Sign(Bytes(Signed(kBatchContext, plan, BatchFields(batch))));
}

void SignDigestTrailer(const SigningKey& key, const PlanId& plan, DigestTrailer& trailer) {
  trailer.signature = key.Sign(Bytes(Signed(kTrailerContext, plan, TrailerFields(trailer))));
}

std::string EncodeDigestBatch(const DigestBatch& batch) {
  std::string out = BatchFields(batch);
  out.append(reinterpret_cast<const char*>(batch.signature.data()), batch.signature.size());
  return out;
}

size_t MaxEncodedDigestBatchBytes() { return kBatchFieldBytes + kMaxChunksPerBatch * (32 + 4) + sizeof(Signature); }

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
  if ((flags & ~kHasWeak) != 0) return Status::InvalidArgument("digest batch with unknown flags");
  const size_t digest_bytes = DigestBytes(kind);
  const size_t weak_bytes = (flags & kHasWeak) ? 4 : 0;
  const size_t expected = kBatchFieldBytes + count * (digest_bytes + weak_bytes) + sizeof(Signature);
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
  std::memcpy(batch.signature.data(), bytes.data() + at, batch.signature.size());
  return batch;
}

std::string EncodeDigestTrailer(const DigestTrailer& trailer) {
  std::string out = TrailerFields(trailer);
  out.append(reinterpret_cast<const char*>(trailer.signature.data()), trailer.signature.size());
  return out;
}

Result<DigestTrailer> DecodeDigestTrailer(std::string_view bytes) {
  if (bytes.size() != kEncodedDigestTrailerBytes) {
    return Status::InvalidArgument("digest trailer of " + std::to_string(bytes.size()) + " bytes, not " +
                                   std::to_string(kEncodedDigestTrailerBytes));
  }
  DigestTrailer trailer;
  trailer.chunks = Get(bytes, 0, 8);
  std::memcpy(trailer.chunk_list_digest.data(), bytes.data() + 8, 32);
  std::memcpy(trailer.payload_sha256.data(), bytes.data() + 40, 32);
  std::memcpy(trailer.signature.data(), bytes.data() + 72, 64);
  return trailer;
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
  if (!VerifySignature(key, Bytes(Signed(kBatchContext, plan, BatchFields(batch))), batch.signature)) {
    return Status::DataLoss(where + " is not signed by the broadcast's source");
  }
  return Status::Ok();
}

Status VerifyDigestTrailer(const PublicKey& key, const PlanId& plan, uint64_t chunks, const DigestTrailer& trailer) {
  if (trailer.chunks != chunks) {
    return Status::DataLoss("the digest trailer counts " + std::to_string(trailer.chunks) + " chunks, not " +
                            std::to_string(chunks));
  }
  if (!VerifySignature(key, Bytes(Signed(kTrailerContext, plan, TrailerFields(trailer))), trailer.signature)) {
    return Status::DataLoss("the digest trailer is not signed by the broadcast's source");
  }
  return Status::Ok();
}

}  // namespace gridcast
