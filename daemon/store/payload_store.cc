#include "daemon/store/payload_store.h"

#include "common/hex.h"

namespace gridcast {

PayloadStore::PayloadStore(PayloadIdentity identity, std::string base_name, std::string spill_dir)
    : identity_(std::move(identity)),
      base_name_(std::move(base_name)),
      spill_dir_(std::move(spill_dir)),
      have_(identity_.NumChunks(), false, spill_dir_) {}

std::optional<Digest> PayloadStore::ExpectedDigest(uint64_t chunk) const {
  if (digest_log_ != nullptr) {
    // A log that cannot be read leaves the chunk unverifiable, never wrongly verified.
    if (Result<std::optional<Digest>> logged = digest_log_->DigestOf(chunk); logged.ok() && logged->has_value()) {
      return **logged;
    }
  }
  if (chunk < identity_.chunk_hashes.size()) return identity_.chunk_hashes[chunk];
  return std::nullopt;
}

Status PayloadStore::CheckDigest(uint64_t chunk, const Digest& digest) const {
  const std::optional<Digest> expected = ExpectedDigest(chunk);
  if (!expected) return Status::Unavailable("the digest of " + ChunkName(chunk) + " has not arrived yet");
  return digest == *expected ? Status::Ok() : DigestMismatch(chunk);
}

Status PayloadStore::CheckReceivable(const PayloadIdentity& identity) {
  if (identity.chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  // No list: the digests come batch by batch (ExpectDigestsFrom).
  if (!identity.chunk_hashes.empty() && identity.chunk_hashes.size() != identity.NumChunks()) {
    return Status::InvalidArgument("payload has " + std::to_string(identity.NumChunks()) + " chunks but " +
                                   std::to_string(identity.chunk_hashes.size()) + " chunk hashes");
  }
  return Status::Ok();
}

void PayloadStore::HoldAll() {
  have_ = ChunkBits(identity_.NumChunks(), true);
  verified_ = identity_.NumChunks();
  finalized_ = true;
}

bool PayloadStore::Has(uint64_t chunk) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunk < have_.size() && have_[chunk];
}

std::vector<uint8_t> PayloadStore::BitmapBytes(uint64_t first, uint64_t count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  first = std::min<uint64_t>(first, have_.size());
  count = std::min<uint64_t>(count, have_.size() - first);
  std::vector<uint8_t> bytes((count + 7) / 8, 0);
  for (uint64_t c = 0; c < count; ++c) {
    if (have_[first + c]) bytes[c / 8] |= static_cast<uint8_t>(1u << (c % 8));
  }
  return bytes;
}

std::vector<ChunkRun> PayloadStore::HeldRuns(size_t most) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ChunkRun> runs;
  for (uint64_t begin = have_.Find(true); begin < have_.size() && runs.size() < most;) {
    const uint64_t end = have_.Find(false, begin);
    runs.push_back({begin, end});
    begin = have_.Find(true, end);
  }
  return runs;
}

Status PayloadStore::WriteChunk(uint64_t chunk, std::span<const uint8_t> data, bool* newly_verified) {
  ReceivedChunk received;
  received.chunk = chunk;
  received.data = data;
  StoreReceived({&received, 1});
  if (newly_verified != nullptr) *newly_verified = received.newly_verified;
  return received.status;
}

void PayloadStore::StoreReceived(std::span<ReceivedChunk> received) {
  std::vector<std::span<const uint8_t>> bytes;
  std::vector<ReceivedChunk*> hashed;
  for (ReceivedChunk& r : received) {
    r.newly_verified = false;
    r.status = Status::Ok();
    if (r.in_place) {
      if (r.chunk >= claimed_.size() || r.data.size() != identity_.ChunkSize(r.chunk)) {
        r.status = Status::InvalidArgument("chunk " + std::to_string(r.chunk) + " has no place claimed here");
        continue;
      }
      // Hashed without the lock: the claim keeps every other writer out of these bytes.
      bytes.push_back(r.data);
    } else {
      bool held = false;
      r.status = CheckReceived(r.chunk, r.data, &held);
      if (!r.status.ok() || held) continue;
      bytes.push_back(r.data);
    }
    hashed.push_back(&r);
  }
  std::vector<Digest> digests(bytes.size());
  HashChunks(identity_.digest, bytes, digests);
  for (size_t i = 0; i < hashed.size(); ++i) {
    ReceivedChunk& r = *hashed[i];
    r.status = r.in_place ? MarkHashedInPlace(r.chunk, digests[i], &r.newly_verified)
                          : StoreHashed(r, digests[i], &r.newly_verified);
  }
}

Status PayloadStore::WriteHashedChunk(uint64_t chunk, std::span<const uint8_t> data, const Digest& digest,
                                      bool* newly_verified) {
  *newly_verified = false;
  bool held = false;
  GRIDCAST_RETURN_IF_ERROR(CheckReceived(chunk, data, &held));
  if (held) return Status::Ok();
  ReceivedChunk received;
  received.chunk = chunk;
  received.data = data;
  return StoreHashed(received, digest, newly_verified);
}

Status PayloadStore::CheckReceived(uint64_t chunk, std::span<const uint8_t> data, bool* held) const {
  *held = false;
  if (chunk >= identity_.NumChunks()) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is out of range");
  }
  if (Has(chunk)) {
    *held = true;
    return Status::Ok();
  }
  if (data.size() != identity_.ChunkSize(chunk)) {
    return Status::DataLoss("chunk " + std::to_string(chunk) + " has " + std::to_string(data.size()) +
                            " bytes, expected " + std::to_string(identity_.ChunkSize(chunk)));
  }
  return Status::Ok();
}

Status PayloadStore::StoreHashed(const ReceivedChunk& received, const Digest& digest, bool* newly_verified) {
  const uint64_t chunk = received.chunk;
  GRIDCAST_RETURN_IF_ERROR(CheckDigest(chunk, digest));
  std::lock_guard<std::mutex> lock(mutex_);
  if (have_[chunk]) return Status::Ok();
  if (Claimed(chunk)) return Status::Aborted(ChunkName(chunk) + " is being received from another connection");
  // The errors name the chunk; built only on failure (this runs once per chunk received).
  if (Status written = PutVerified(received); !written.ok()) {
    return written.WithContext("storing " + ChunkName(chunk));
  }
  Status marked = MarkVerified(chunk);
  if (!marked.ok()) return marked.WithContext("recording " + ChunkName(chunk) + " as verified");
  *newly_verified = true;
  return marked;
}

Status PayloadStore::MarkHashedInPlace(uint64_t chunk, const Digest& digest, bool* newly_verified) {
  std::lock_guard<std::mutex> lock(mutex_);
  claimed_.Set(chunk, false);
  if (have_[chunk]) return Status::Ok();
  GRIDCAST_RETURN_IF_ERROR(CheckDigest(chunk, digest));
  Status marked = MarkVerified(chunk);
  if (!marked.ok()) return marked.WithContext("recording " + ChunkName(chunk) + " as verified");
  *newly_verified = true;
  return Status::Ok();
}

Status PayloadStore::MarkVerified(uint64_t chunk) {
  have_.Set(chunk);
  verified_.fetch_add(1, std::memory_order_relaxed);
  return RecordVerified(chunk);
}

std::string PayloadStore::ChunkName(uint64_t chunk) const {
  return "chunk " + std::to_string(chunk) + " of " + base_name_;
}

Status PayloadStore::DigestMismatch(uint64_t chunk) const {
  return Status::DataLoss(ChunkName(chunk) + " failed its " + std::string(DigestName(identity_.digest)) + " check");
}

Status PayloadStore::ReadChunk(uint64_t chunk, std::span<uint8_t> out) const {
  if (out.size() != identity_.ChunkSize(chunk)) {
    return Status::InvalidArgument("read of chunk " + std::to_string(chunk) + " has the wrong size");
  }
  return ReadBlock(chunk, 0, out);
}

Status PayloadStore::ReadBlock(uint64_t chunk, uint64_t offset, std::span<uint8_t> out) const {
  if (!Has(chunk)) return Status::FailedPrecondition("chunk " + std::to_string(chunk) + " is not held");
  if (offset > identity_.ChunkSize(chunk) || out.size() > identity_.ChunkSize(chunk) - offset) {
    return Status::InvalidArgument("read outside chunk " + std::to_string(chunk));
  }
  return ReadStored(ChunkOffset(chunk) + offset, out);
}

Result<Digest> PayloadStore::ListDigest() const {
  if (digest_log_ != nullptr) {
    if (std::optional<Digest> folded = digest_log_->ListDigest()) return *folded;
  }
  if (identity_.chunk_hashes.size() == identity_.NumChunks()) return identity_.ListDigest();
  return Status::FailedPrecondition("the digests of " + base_name_ + " have not all arrived");
}

Result<Digest> PayloadStore::Finalize(bool sync) {
  if (!finalized_ && !Complete()) return Status::FailedPrecondition("payload is not complete");
  GRIDCAST_ASSIGN_OR_RETURN(const Digest digest, ListDigest());
  if (finalized_) return digest;
  if (identity_.Streams()) {
    const std::optional<DigestClosing> closing = digest_log_->Closing();
    if (!closing || digest != closing->chunk_list_digest ||
        (identity_.chunk_list_digest && digest != *identity_.chunk_list_digest)) {
      return Status::DataLoss("the digests of " + base_name_ + "'s batches do not make the list the source announced");
    }
  }
  GRIDCAST_RETURN_IF_ERROR(Persist(sync));
  finalized_ = true;
  return digest;
}

Status PayloadStore::WriteListTo(FileIo& io, const std::string& path, bool sync) const {
  if (!identity_.Streams()) return WriteChunkList(io, path, identity_, sync);
  if (digest_log_ == nullptr || !digest_log_->Closing()) {
    return Status::FailedPrecondition("the digests of " + base_name_ + " have not all arrived");
  }
  PayloadIdentity header = identity_;
  header.sha256 = digest_log_->Closing()->payload_sha256;
  return WriteChunkList(io, path, header, digest_log_->rule().count(), [&](uint64_t b) -> Result<std::vector<Digest>> {
    GRIDCAST_ASSIGN_OR_RETURN(DigestBatch batch, digest_log_->Batch(b));
    return std::move(batch.digests);
  }, sync);
}

Result<PayloadIdentity> PayloadStore::RecordedHeader(const std::string& data_dir, const std::string& name, FileIo& io) {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  return ReadChunkListHeader(io, PayloadStatePath(data_dir, name, ".chunks"), name);
}

Result<PayloadIdentity> PayloadStore::RecordedIdentity(const std::string& data_dir, const std::string& name,
                                                       FileIo& io) {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  return ReadChunkList(io, PayloadStatePath(data_dir, name, ".chunks"), name);
}

}  // namespace gridcast
