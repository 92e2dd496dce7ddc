#include "daemon/store/lent_memory_store.h"

namespace gridcast {

Status LentMemoryStore::WholeChunksOnly() const {
  return Status::FailedPrecondition(base_name_ + " goes into lent memory, whole chunks only");
}

Status LentMemoryStore::WriteBlock(uint64_t, uint64_t, std::span<const uint8_t>) { return WholeChunksOnly(); }

Status LentMemoryStore::VerifyStoredChunk(uint64_t chunk, bool* newly_verified) {
  if (newly_verified != nullptr) *newly_verified = false;
  if (chunk >= identity_.NumChunks()) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is out of range");
  }
  return Has(chunk) ? Status::Ok() : WholeChunksOnly();
}

Status LentMemoryStore::ReadStored(uint64_t, std::span<uint8_t>) const { return WholeChunksOnly(); }

Result<ChunkRef> LentMemoryStore::ChunkAt(uint64_t chunk) const {
  return memory_->At(chunk, ChunkOffset(chunk), identity_.ChunkSize(chunk));
}

Status LentMemoryStore::PutVerified(const ReceivedChunk& received) {
  return memory_->Write(received.chunk, ChunkOffset(received.chunk), received.data, received.buffer);
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenForRankMemory(const std::string& name,
                                                                      PayloadIdentity identity,
                                                                      std::shared_ptr<RankMemory> destination) {
  GRIDCAST_RETURN_IF_ERROR(CheckReceivable(identity));
  if (destination == nullptr || destination->regions() == 0) {
    return Status::InvalidArgument("no lent memory to receive " + name + " into");
  }
  return std::unique_ptr<PayloadStore>(new LentMemoryStore(std::move(identity), name, std::move(destination)));
}

Result<std::unique_ptr<PayloadStore>> PayloadStore::OpenLentSource(const std::string& name, PayloadIdentity identity,
                                                                   std::shared_ptr<RankMemory> lent) {
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<PayloadStore> store,
                            OpenForRankMemory(name, std::move(identity), std::move(lent)));
  store->HoldAll();
  return store;
}

}  // namespace gridcast
