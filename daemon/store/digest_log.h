// DigestLog: the signed batches of chunk digests a member verified (common/digest_batches.h,
// docs/streamed-digests.md), or a source signed, with memory flat in the payload's size. Each
// recorded batch's digests are written at their chunks' places in a file (DigestBytes per
// chunk, as a chunk list holds them), its weak checksums (if any) in "<path>.weak" and its
// signature in "<path>.signatures", so that the batch can be passed on as it came, to
// children, long after; the last kCachedBatches batches are also kept in memory. The batches
// are folded in order into the chunk-list digest (ChunkListDigest of the whole list), known
// once every batch is recorded. Only a batch its caller verified is recorded: the log trusts
// what it is given. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/crypto.h"
#include "common/digest_batches.h"
#include "common/file_io.h"

namespace gridcast {

class DigestLog {
 public:
  static constexpr size_t kCachedBatches = 64;

  // `path`: the file the digests go to, made (or emptied) here with its two companions. `io`
  // outlives the log.
  static Result<std::unique_ptr<DigestLog>> Open(const std::string& path, ChunkDigest kind, const DigestBatches& rule,
                                                 FileIo& io);
  // The same in three unnamed files in directory `dir` (O_TMPFILE): gone with the log, even
  // after a crash.
  static Result<std::unique_ptr<DigestLog>> OpenUnnamed(const std::string& dir, ChunkDigest kind,
                                                        const DigestBatches& rule, FileIo& io);
  ~DigestLog();
  DigestLog(const DigestLog&) = delete;
  DigestLog& operator=(const DigestLog&) = delete;

  // Records a verified batch; one recorded before is left as it is. InvalidArgument for a batch
  // the rule does not have, or of another digest; the file's errors as they come.
  Status Record(const DigestBatch& batch);
  bool Has(uint64_t batch) const;
  const DigestBatches& rule() const { return rule_; }
  // The digest of `chunk`, when its batch is recorded (from memory, else from the file).
  Result<std::optional<Digest>> DigestOf(uint64_t chunk) const;
  // Batch `batch` as it was recorded, signature included. FailedPrecondition when it is not.
  Result<DigestBatch> Batch(uint64_t batch) const;
  // The chunk-list digest, once every batch is recorded.
  std::optional<Digest> ListDigest() const;
  // What the last batch says closes the list, once it is recorded; for a rule of segments,
  // the chunk-list digest (as both fields) once every batch is.
  std::optional<DigestClosing> Closing() const;
  uint64_t recorded() const;

 private:
  DigestLog(std::array<int, 3> fds, ChunkDigest kind, const DigestBatches& rule, FileIo& io)
      : fd_(fds[0]), weak_fd_(fds[1]), signatures_fd_(fds[2]), kind_(kind), rule_(rule), io_(io),
        recorded_(rule.count(), false) {}

  // Over three open files: the digests, weak checksums and signatures.
  static Result<std::unique_ptr<DigestLog>> Over(std::array<int, 3> fds, ChunkDigest kind, const DigestBatches& rule,
                                                 FileIo& io);
  // Folds every recorded batch that follows the folded ones; mutex_ held.
  Status FoldInOrder();
  // Recorded batch `batch` from the cache or the files; mutex_ held.
  Result<DigestBatch> Load(uint64_t batch) const;

  const int fd_;
  const int weak_fd_;
  const int signatures_fd_;
  const ChunkDigest kind_;
  const DigestBatches rule_;
  FileIo& io_;
  mutable std::mutex mutex_;
  std::vector<bool> recorded_;                        // by batch; guarded by mutex_
  uint64_t recorded_count_ = 0;                       // guarded by mutex_
  std::vector<bool> weak_;                            // by batch: it came with weak checksums; guarded by mutex_
  std::map<uint64_t, DigestBatch> cache_;             // by batch; guarded by mutex_
  std::deque<uint64_t> cached_order_;                 // oldest first; guarded by mutex_
  uint64_t folded_ = 0;                               // batches folded; guarded by mutex_
  Sha256Stream fold_;                                 // guarded by mutex_
  std::optional<Digest> list_digest_;                 // guarded by mutex_
  std::optional<DigestClosing> closing_;              // guarded by mutex_
};

}  // namespace gridcast
