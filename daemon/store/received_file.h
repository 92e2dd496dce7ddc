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

class ReceivedFile final : public FileStore, public ChunkPlacement, public ForwardedChunks, public KnownChunks {
 public:
  ~ReceivedFile() override;

  StoreCapabilities capabilities() override;
  Taken TakeKnownChunks(uint64_t first, uint64_t count, std::span<const uint32_t> weak) override;
  bool Searches() const override { return !resume_candidates_.empty() || earlier_copy_ != nullptr; }
  uint64_t Candidates() const override;
  std::span<uint8_t> Claim(uint64_t chunk) override;
  void Release(uint64_t chunk) override;
  void Forwarded(uint64_t chunk) override;
  bool MayBlock() const override { return true; }
  Result<ChunkRef> ChunkAt(uint64_t chunk) const override;
  // A block into a linked ".part" breaks the link first.
  Status WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) override;

 private:
  friend class PayloadStore;  // OpenForReceive makes it
  ReceivedFile(PayloadIdentity identity, std::string base_name, FileIo& io, DirFd dir, std::string spill_dir)
      : FileStore(std::move(identity), std::move(base_name), io, -1, std::move(spill_dir)), dir_(std::move(dir)) {}

  Status PutVerified(const ReceivedChunk& received) override;
  Status RecordVerified(uint64_t chunk) override;
  Status Persist(bool sync) override;

  // Maps the payload when it is on a tmpfs, so that chunks are received straight into their
  // final pages and forwarded from them: one copy in per hop, where a buffer and a pwrite make
  // two. Elsewhere (a disk) it does nothing.
  Status MapIntoPlace();
  // ReceiveOptions::take_memory_now.
  Status TakeMemoryNow();

  // Opens (or makes, from a spare of `warm` when there is one) "<name>.part" at the payload's
  // size, making sure of its space. With `may_link`, an earlier copy under the name and of the
  // payload's size becomes the ".part" by a hard link (linked_), until the first write.
  Status OpenPart(const std::string& name, ReceiveSpace space, WarmMemory* warm, bool may_link);
  // Before the first write into a linked ".part": it becomes a copy of its own, so the earlier
  // copy stays whole until Finalize. REQUIRES: mutex_ held.
  Status BreakLinkLocked();
  // Opens the resume bitmap at `state_path`: the chunks it marks become candidates, held once
  // their bytes in the file hash to their digests (TakeKnownChunks); bits stay set until then,
  // so a restart before the digests came loses nothing.
  Status OpenResumeState(const std::string& state_path);
  // The earlier copy `file` in `dir` (the one under the final name, or the request's base),
  // when it is a regular file. InvalidArgument when it is a symlink; `what` names it in errors.
  Result<std::shared_ptr<const ByteSource>> OpenEarlierCopy(int dir, const std::string& file, const std::string& what);
  // TakeKnownChunks' ways, each over the chunks it is shown that are not held yet: what the
  // ".part" holds where it is (an earlier attempt's chunks its bitmap names, or every chunk of
  // one that began as the earlier copy), and what the earlier copy holds near where it is.
  void HashInPlace(uint64_t first, uint64_t count, Taken& taken);
  void SearchNear(const ByteSource& copy, uint64_t first, uint64_t count, std::span<const uint32_t> weak,
                  Taken& taken);
  // Stores bytes that hashed to `digest` as chunk `chunk`, found in an earlier copy.
  void TakeFound(uint64_t chunk, std::span<const uint8_t> bytes, const Digest& digest, Taken& taken);

  // What TakeKnownChunks takes from; guarded by search_mutex_ (one search at a time).
  std::mutex search_mutex_;
  ChunkBits resume_candidates_;                        // the earlier attempt's bitmap, by chunk
  std::shared_ptr<const ByteSource> earlier_copy_;     // searched by weak checksums
  int64_t shift_ = 0;  // where the last chunk found in earlier_copy_ was, less where it is now

  // The ".part" is a hard link to the earlier copy under the payload's name (OpenPart): its
  // chunks are looked for in place. Changed under mutex_ only (BreakLinkLocked: the new file
  // holds only the chunks held); atomic for the search's first look without the lock.
  std::atomic<bool> linked_{false};
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
