// Holdings: what this daemon holds in its data and memory directories, as the control calls
// List, ChunkMap, DescribePart and Remove (and the retention sweep) see it. Plans still
// writing a payload are asked through RunningPlans. Thread-safe as its parts are.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <array>
#include <map>
#include <memory>
#include <string>

#include "common/crypto.h"
#include "common/member_signature.h"
#include "common/signing.h"
#include "include/gridcast/result.h"
#include "daemon/participant/payload_directories.h"
#include "daemon/participant/running_plans.h"
#include "daemon/store/retention.h"
#include "daemon/store/warm_memory.h"
#include "proto/control.pb.h"

namespace gridcast {

class Holdings {
 public:
  // All four outlive the Holdings. `closer` closes the files of removed payloads (freeing a
  // big in-memory payload's pages takes a while) after the answer; `warm` (or null) keeps the
  // pages of removed in-memory payloads for the next one.
  // `signer` (or null, without TLS) signs the keys of the parts it describes.
  Holdings(const PayloadDirectories& directories, const RunningPlans& running, boost::asio::thread_pool& closer,
           WarmMemory* warm, std::shared_ptr<const MemberSigner> signer = nullptr)
      : directories_(directories), running_(running), closer_(closer), warm_(warm), signer_(std::move(signer)) {
    RandomBytes(part_key_secret_);
  }

  // Every payload in the data and memory directories; with `verify`, each complete one
  // re-hashed against its recorded chunk list (PayloadStore::Scrub).
  v1::ListResponse List(bool verify) const;

  // Which chunks of `name` are verified here: from the plan receiving it (from `first_chunk`,
  // a multiple of 8, at most `max_chunks`, 0 or more than kMaxChunkMapChunks read as that),
  // else all of a complete copy. NotFound when there is neither.
  static constexpr uint64_t kMaxChunkMapChunks = uint64_t{1} << 28;
  Result<v1::ChunkMapResponse> ChunkMap(const HeldName& name, uint64_t first_chunk = 0, uint64_t max_chunks = 0) const;

  // An allgather part this daemon holds (DescribePartRequest): its size, and with a chunk
  // size the public key of PartKey for it. Nothing is read: the part is hashed as it is seeded.
  static constexpr size_t kPartKeyNonceBytes = 16;
  Result<v1::DescribePartResponse> DescribePart(const v1::DescribePartRequest& request) const;
  // The key this daemon signs the digests of the part it described with `nonce` with
  // (Part.digest_key): derived from a secret it made at start, the nonce and what was described
  // (the part's path and place, its size, the chunk size and digest), so it needs no state
  // between DescribePart and Prepare, and a daemon restarted since cannot sign for it.
  Result<SigningKey> PartKey(const v1::DescribePartRequest& described, uint64_t size_bytes) const;

  // Deletes a payload (and its recorded chunk list): a file, a directory with all below it, or
  // the partial copy an interrupted broadcast left (and its resume bitmap). FailedPrecondition
  // while a broadcast of it (or of anything below it) runs here; NotFound when there is none.
  Status Remove(const HeldName& name);

  // Removes what the policies let go (store/retention.h) from the data and the memory
  // directory, logging each; what cannot go now (in use) stays for a later sweep. Then the
  // warm memory lets go of what lay unused too long.
  void SweepRetention(const RetentionPolicy& data, const RetentionPolicy& memory);

 private:
  // Whether `file` in `dir_fd`, of the payload `name`, went to the warm memory.
  bool Keep(const HeldName& name, int dir_fd, const std::string& file);
  void ListDirectory(bool in_memory, bool verify, const std::map<HeldName, PlanRun>& running,
                     v1::ListResponse* response) const;

  const PayloadDirectories& directories_;
  const RunningPlans& running_;
  boost::asio::thread_pool& closer_;
  WarmMemory* warm_;
  std::shared_ptr<const MemberSigner> signer_;
  std::array<uint8_t, 32> part_key_secret_{};
};

}  // namespace gridcast
