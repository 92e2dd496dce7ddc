// DigestStream: one plan's signed batches of chunk digests at this member (docs/streamed-
// digests.md, common/digest_batches.h). A source that knows its chunks' digests (it read the
// payload first, or its sender declared them) signs each batch from that list the first time a
// connection needs it; a source that reads its payload as it sends it seals each batch as its
// chunks are hashed (SourceSealing, source_sealing.h), and a connection that needs a batch not
// sealed yet waits for it. A member verifies each batch a parent sends against the public key
// of the plan (Payload.digest_key) and keeps it (DigestLog) to pass on to its own children
// exactly as the source signed it. A connection carries a chunk's batch before any frame about
// the chunk (lane_sender.h), and a member takes a chunk only once it holds its batch
// (CheckParentFrame). Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/digest_batches.h"
#include "common/ids.h"
#include "common/signing.h"
#include "daemon/store/digest_log.h"
#include "daemon/store/payload_identity.h"

namespace gridcast {

class DigestStream {
 public:
  // At the source: it signs with `key`, from the identity's list when it has one, else what
  // Seal() is given. `identity` outlives the stream (the store's).
  static Result<std::unique_ptr<DigestStream>> ForSource(const PlanId& plan, const PayloadIdentity& identity,
                                                         SigningKey key, std::shared_ptr<DigestLog> log);
  // At a member: batches must be signed by `key`.
  static Result<std::unique_ptr<DigestStream>> ForMember(const PlanId& plan, const PayloadIdentity& identity,
                                                         const PublicKey& key, std::shared_ptr<DigestLog> log);
  // In an allgather: the batches of segment s of `rule` (part s) must be signed by keys[s], its
  // holder's; each holder recorded its own part's batches as it seeded it (SeedPart).
  static Result<std::unique_ptr<DigestStream>> ForParts(const PlanId& plan, const PayloadIdentity& identity,
                                                        DigestBatches rule, std::vector<PublicKey> keys,
                                                        std::shared_ptr<DigestLog> log);

  const DigestBatches& rule() const { return rule_; }
  // Whether batch `batch` can be sent now: held, or (at a source with a list) signed now. A
  // source that seals its batches notes the batch as wanted.
  bool Available(uint64_t batch);
  // At a source that seals its batches: one past the furthest batch a connection asked for,
  // and what to call, on the asking thread, when that grows. Set before the first Available.
  uint64_t Wanted() const { return wanted_.load(std::memory_order_relaxed); }
  void OnWanted(std::function<void()> callback) { on_wanted_ = std::move(callback); }
  // At a source without a list: signs `batch` (its digests, its weak checksums when the plan
  // offers reuse, its closing when it is the last) and keeps it.
  Status Seal(DigestBatch batch);
  // Batch `batch` as a DIGESTS frame carries it. REQUIRES: Available(batch).
  Result<std::string> Encoded(uint64_t batch) const;
  // Whether the batch holding `chunk`'s digest is held here.
  bool Covers(uint64_t chunk) const { return log_->Has(rule_.BatchOf(chunk)); }
  // OK when a DIGESTS frame may name `chunk` as its batch's first chunk.
  Status CheckFirstChunk(uint64_t chunk) const;
  // Batches held here, and whether that is all of them.
  uint64_t Held() const { return log_->recorded(); }
  bool HoldsEvery() const { return Held() == rule_.count(); }
  // A DIGESTS frame's body from a parent: kept when it decodes, is the rule's batch at its
  // index, is signed by the plan's key for this plan and agrees with the plan's list; a batch
  // held already is dropped unread. DataLoss or InvalidArgument, saying why, otherwise.
  Status Accept(std::string_view body);
  // Called with each batch newly kept by Accept, on its thread. Set before the first Accept.
  void OnNewBatch(std::function<void(uint64_t batch)> callback) { on_new_batch_ = std::move(callback); }

 private:
  DigestStream(const PlanId& plan, const PayloadIdentity& identity, DigestBatches rule, std::vector<PublicKey> keys,
               std::optional<SigningKey> signing, std::shared_ptr<DigestLog> log)
      : plan_(plan), identity_(identity), rule_(std::move(rule)), keys_(std::move(keys)),
        signing_(std::move(signing)), log_(std::move(log)) {}

  const PlanId plan_;
  const PayloadIdentity& identity_;
  const DigestBatches rule_;
  const std::vector<PublicKey> keys_;  // by segment of rule_
  const std::optional<SigningKey> signing_;
  const std::shared_ptr<DigestLog> log_;  // the store's (PayloadStore::digest_log)
  std::function<void(uint64_t batch)> on_new_batch_;
  std::function<void()> on_wanted_;
  std::atomic<uint64_t> wanted_{0};
};

}  // namespace gridcast
