// LentMemoryStore: a payload in memory that processes of this host lent the daemon
// (rank_memory.h: the MPI shim's ranks) instead of a file. A receiver's (OpenForRankMemory)
// writes each verified chunk there, whole chunks only, and keeps nothing: once complete the
// payload is the lenders'. A source's (OpenLentSource) holds every chunk the lender declared
// and reads them from there as they are sent.
#pragma once

#include <memory>
#include <string>

#include "daemon/store/payload_store.h"
#include "daemon/store/rank_memory.h"

namespace gridcast {

class LentMemoryStore final : public PayloadStore, public ForwardedChunks {
 public:
  LentMemoryStore(PayloadIdentity identity, std::string name, std::shared_ptr<RankMemory> memory)
      : PayloadStore(std::move(identity), std::move(name)), memory_(std::move(memory)) {}

  // Whole chunks only: blocks (a swarm's) have no place here.
  Status WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) override;
  Status VerifyStoredChunk(uint64_t chunk, bool* newly_verified = nullptr) override;
  // A forwarded chunk's buffer is no longer kept.
  void Forwarded(uint64_t chunk) override { memory_->Forwarded(chunk); }
  bool MayBlock() const override { return false; }
  Result<ChunkRef> ChunkAt(uint64_t chunk) const override;
  StoreCapabilities capabilities() override { return {.forwarded = this, .one_copy_writes = true}; }

 private:
  Status PutVerified(const ReceivedChunk& received) override;
  Status ReadStored(uint64_t offset, std::span<uint8_t> out) const override;
  Status WholeChunksOnly() const;

  std::shared_ptr<RankMemory> memory_;
};

}  // namespace gridcast
