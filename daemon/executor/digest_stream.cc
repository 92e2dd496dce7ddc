#include "daemon/executor/digest_stream.h"

#include <string>

namespace gridcast {
namespace {

DigestBatches WholeRule(const PayloadIdentity& identity) { return {identity.chunk_bytes, identity.NumChunks()}; }

}  // namespace

Result<std::unique_ptr<DigestStream>> DigestStream::ForSource(const PlanId& plan, const PayloadIdentity& identity,
                                                              SigningKey key, std::shared_ptr<DigestLog> log) {
  const PublicKey public_key = key.public_key();
  return std::unique_ptr<DigestStream>(new DigestStream(plan, identity, WholeRule(identity), {public_key},
                                                        std::move(key), std::move(log)));
}

Result<std::unique_ptr<DigestStream>> DigestStream::ForMember(const PlanId& plan, const PayloadIdentity& identity,
                                                              const PublicKey& key, std::shared_ptr<DigestLog> log) {
  return std::unique_ptr<DigestStream>(
      new DigestStream(plan, identity, WholeRule(identity), {key}, std::nullopt, std::move(log)));
}

Result<std::unique_ptr<DigestStream>> DigestStream::ForParts(const PlanId& plan, const PayloadIdentity& identity,
                                                             DigestBatches rule, std::vector<PublicKey> keys,
                                                             std::shared_ptr<DigestLog> log) {
  // Checked here, built below: GCC 12 at -O1 takes an early return beside an empty optional's
  // move for a read of the optional's payload (-Wmaybe-uninitialized).
  const bool cut = keys.size() == rule.segments() && rule.chunks() == identity.NumChunks();
  std::unique_ptr<DigestStream> stream(
      cut ? new DigestStream(plan, identity, std::move(rule), std::move(keys), std::nullopt, std::move(log)) : nullptr);
  if (stream == nullptr) return Status::InvalidArgument("an allgather's parts and keys do not cut its payload");
  return stream;
}

bool DigestStream::Available(uint64_t batch) {
  if (log_->Has(batch)) return true;
  if (!signing_ || batch >= rule_.count()) return false;
  if (identity_.Streams()) {  // sealed as the source reads its payload
    uint64_t wanted = wanted_.load(std::memory_order_relaxed);
    bool grew = false;
    while (wanted <= batch && !(grew = wanted_.compare_exchange_weak(wanted, batch + 1, std::memory_order_relaxed))) {
    }
    if (grew && on_wanted_) on_wanted_();
    return false;
  }
  const DigestBatches::Range range = rule_.RangeOf(batch);
  DigestBatch signed_batch;
  signed_batch.index = batch;
  signed_batch.first_chunk = range.first;
  signed_batch.kind = identity_.digest;
  const auto first = static_cast<std::ptrdiff_t>(range.first);
  const auto end = first + static_cast<std::ptrdiff_t>(range.count);
  signed_batch.digests.assign(identity_.chunk_hashes.begin() + first, identity_.chunk_hashes.begin() + end);
  if (!identity_.weak_checksums.empty()) {
    signed_batch.weak.assign(identity_.weak_checksums.begin() + first, identity_.weak_checksums.begin() + end);
  }
  if (rule_.Closes(batch)) signed_batch.closing = DigestClosing{identity_.ListDigest(), identity_.sha256};
  SignDigestBatch(*signing_, plan_, signed_batch);
  return log_->Record(signed_batch).ok();
}

Status DigestStream::Seal(DigestBatch batch) {
  if (!signing_) return Status::Internal("a member cannot seal digest batches");
  SignDigestBatch(*signing_, plan_, batch);
  return log_->Record(batch);
}

Result<std::string> DigestStream::Encoded(uint64_t batch) const {
  GRIDCAST_ASSIGN_OR_RETURN(const DigestBatch held, log_->Batch(batch));
  return EncodeDigestBatch(held);
}

Status DigestStream::CheckFirstChunk(uint64_t chunk) const {
  if (chunk >= rule_.chunks() || rule_.RangeOf(rule_.BatchOf(chunk)).first != chunk) {
    return Status::InvalidArgument("a batch of digests said to start at chunk " + std::to_string(chunk));
  }
  return Status::Ok();
}

Status DigestStream::Accept(std::string_view body) {
  GRIDCAST_ASSIGN_OR_RETURN(const DigestBatch batch, DecodeDigestBatch(body, identity_.digest));
  if (log_->Has(batch.index)) return Status::Ok();
  if (batch.index >= rule_.count()) {
    return Status::DataLoss("digest batch " + std::to_string(batch.index) + " is past the payload's " +
                            std::to_string(rule_.count()) + " batches");
  }
  GRIDCAST_RETURN_IF_ERROR(
      VerifyDigestBatch(keys_[rule_.SegmentOf(batch.index)], plan_, rule_, identity_.OffersReuse(), batch));
  for (size_t i = 0; i < batch.digests.size(); ++i) {
    const uint64_t chunk = batch.first_chunk + i;
    if ((!identity_.chunk_hashes.empty() && batch.digests[i] != identity_.chunk_hashes[chunk]) ||
        (!batch.weak.empty() && !identity_.weak_checksums.empty() && batch.weak[i] != identity_.weak_checksums[chunk])) {
      return Status::DataLoss("digest batch " + std::to_string(batch.index) + " disagrees with the plan on chunk " +
                              std::to_string(chunk));
    }
  }
  if (batch.closing && ((identity_.chunk_list_digest && batch.closing->chunk_list_digest != *identity_.chunk_list_digest) ||
                        (identity_.sha256 != Digest{} && batch.closing->payload_sha256 != identity_.sha256))) {
    return Status::DataLoss("the last digest batch closes another list than the plan announced");
  }
  GRIDCAST_RETURN_IF_ERROR(log_->Record(batch));
  if (on_new_batch_) on_new_batch_(batch.index);
  return Status::Ok();
}

}  // namespace gridcast
