// FileStore: a payload whose chunks lie at their offsets in one file (fd_), read and written
// through a FileIo. The base of SourceFile and ReceivedFile; owns and closes the file.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "daemon/store/payload_store.h"

namespace gridcast {

class FileStore : public PayloadStore {
 public:
  ~FileStore() override;

  Status WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) override;
  Status VerifyStoredChunk(uint64_t chunk, bool* newly_verified = nullptr) override;
  Result<ChunkRef> ChunkAt(uint64_t chunk) const override;

 protected:
  // Takes `fd` (-1: none yet).
  FileStore(PayloadIdentity identity, std::string base_name, FileIo& io, int fd, std::string spill_dir = {})
      : PayloadStore(std::move(identity), std::move(base_name), std::move(spill_dir)), io_(&io), fd_(fd) {}

  Status PutVerified(const ReceivedChunk& received) override;
  Status ReadStored(uint64_t offset, std::span<uint8_t> out) const override;
  // Reads `chunk` from the file into `buffer` (LargestChunk() bytes) and returns its digest.
  Result<Digest> HashStoredChunk(uint64_t chunk, std::vector<uint8_t>& buffer) const;
  // Hashes the stored bytes of every chunk in [first, end) `wanted` says, in order, several at
  // once where HashChunks is faster so (SHA-256: 2.3x), and shows each digest (and the bytes
  // it is of) to `hashed`; stops when it returns false. The first read error is returned
  // (chunks before it were shown).
  using HashedChunk = std::function<bool(uint64_t chunk, const Digest& digest, std::span<const uint8_t> bytes)>;
  Status HashStoredChunks(uint64_t first, uint64_t end, const std::function<bool(uint64_t chunk)>& wanted,
                          const HashedChunk& hashed) const;

  FileIo* io_;
  int fd_;  // the payload (.part while a receiver receives it)
};

}  // namespace gridcast
