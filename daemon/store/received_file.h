// ReceivedFile: a payload a member receives into "<name>.part" below its data (or memory)
// directory (PayloadStore::OpenForReceive). Each verified chunk is marked in a resume bitmap
// (state_files.h); a reopened store holds the marked chunks whose bytes still hash right.
// Finalize records the chunk list and renames the file to its name. On a tmpfs it can map the
// file so chunks are received straight into their final pages (ReceiveOptions::in_place: its
// ChunkPlacement), and on a disk it keeps a window of the page cache for forwarded chunks
// (ReceiveOptions::page_cache_window_bytes: its ForwardedChunks).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "common/safe_path.h"
#include "daemon/store/file_store.h"

namespace gridcast {

class ReceivedFile final : public FileStore, public ChunkPlacement, public ForwardedChunks {
 public:
  ~ReceivedFile() override;

  StoreCapabilities capabilities() override;
  std::span<uint8_t> Claim(uint64_t chunk) override;
  void Release(uint64_t chunk) override;
  void Forwarded(uint64_t chunk) override;
  bool MayBlock() const override { return true; }
  Result<ChunkRef> ChunkAt(uint64_t chunk) const override;

 private:
  friend class PayloadStore;  // OpenForReceive makes it
  ReceivedFile(PayloadIdentity identity, std::string base_name, FileIo& io, DirFd dir)
      : FileStore(std::move(identity), std::move(base_name), io, -1), dir_(std::move(dir)) {}

  Status PutVerified(const ReceivedChunk& received) override;
  Status RecordVerified(uint64_t chunk) override;
  Status Persist(bool sync) override;

  // Maps the payload when it is on a tmpfs, so that chunks are received straight into their
  // final pages and forwarded from them: one copy in per hop, where a buffer and a pwrite make
  // two. Elsewhere (a disk) it does nothing.
  Status MapIntoPlace();
  // ReceiveOptions::take_memory_now.
  Status TakeMemoryNow();

  // A complete copy already under the final name: true when it hashes to the identity (then
  // every chunk is held and nothing is left to do); InvalidArgument when the name is a symlink.
  // `name` (the payload's, below the data directory) names it in errors.
  Result<bool> AdoptCompleteCopy(const std::string& name);
  // Opens (or makes, from a spare of `warm` when there is one) "<name>.part" at the payload's
  // size, making sure of its space.
  Status OpenPart(const std::string& name, ReceiveSpace space, WarmMemory* warm);
  // Holds the chunks the bitmap at `state_path` marks whose bytes in the file still hash right,
  // and records just those there.
  Status ResumeFromBitmap(const std::string& state_path);
  // Finds the chunks not held yet in the earlier copy `file` in `dir` (another version: the
  // copy under the final name, or the request's base) by their weak checksums
  // (delta/held_chunks.h) and writes each one found as a received chunk (verified, marked in
  // the bitmap). Reuse only saves a transfer: an earlier copy that cannot be read, or is no
  // regular file, gives nothing. Adds what it took to reused_bytes_.
  void TakeFromEarlierCopy(int dir, const std::string& file);
  // The same over any bytes; a read error ends the search, keeping what it found before.
  void TakeFromEarlierCopy(const ByteSource& earlier);

  DirFd dir_;                // holds the payload; for renameat
  int state_fd_ = -1;        // the resume bitmap; -1 once finalized
  std::string state_path_;
  std::string chunks_path_;  // where Persist records the chunk list
  uint8_t* mapped_ = nullptr;  // the payload's pages, when MapIntoPlace mapped them
  size_t mapped_bytes_ = 0;
  bool populated_ = false;     // TakeMemoryNow mapped every page: Claim need not; guarded by mutex_
  uint64_t page_cache_window_ = 0;
  std::atomic<uint64_t> unsubmitted_bytes_{0};  // written since the last writeback submission
  std::mutex forwarded_mutex_;      // guards the two below
  std::deque<uint64_t> forwarded_;  // forwarded chunks still in the page cache, oldest first
  uint64_t forwarded_bytes_ = 0;
};

}  // namespace gridcast
