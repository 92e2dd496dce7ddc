// An allgather's payload (plan.proto Payload.parts): a bundle of the members' parts, each padded
// with zeros to whole chunks, so that every chunk belongs to one part and a part's chunks are
// the lane its holder sources. Each member writes its own part into its copy of the bundle as
// verified chunks before the transfer (the store then serves them as a resumed member serves
// what it holds), receives the rest, and on disk splits the finished bundle into one file per
// part under NAME/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/crypto.h"
#include "common/digest_batches.h"
#include "common/ids.h"
#include "common/signing.h"
#include "include/gridcast/result.h"
#include "daemon/store/payload_store.h"

namespace gridcast {

// A bundle on disk is named NAME.allgather and ends as the directory NAME.
inline constexpr const char* kAllgatherBundleSuffix = ".allgather";

struct BundlePart {
  uint32_t member = 0;  // whole-plan member index of its holder
  std::string name;     // file name under NAME/
  uint64_t size_bytes = 0;
  uint64_t first_chunk = 0;
  uint64_t chunks = 0;
  std::string path;     // at its holder
  bool in_memory = false;  // path is relative to the holder's memory directory
};

// Checks parts received in a plan (untrusted): holders below `members`, names single safe path
// components and distinct, chunks = size rounded up to chunk_bytes, the parts back to back from
// chunk 0 and covering exactly the payload's `size_bytes` (= chunks x chunk_bytes).
Status CheckBundleParts(const std::vector<BundlePart>& parts, uint32_t members, uint64_t chunk_bytes,
                        uint64_t size_bytes);

// NAME for a bundle named NAME.allgather; InvalidArgument otherwise.
Result<std::string> DirectoryOfBundle(const std::string& bundle_name);

// Writes the part (read from `fd`, padded with zeros to whole chunks) into the bundle as
// verified chunks, a batch at a time: its holder is the part's source, so each batch of the
// part's segment of `rule` is hashed, signed with `key` for `plan` and recorded in the store's
// digest log (which the store checks chunks against), then its chunks not held yet (a resumed
// member's) are written. DataLoss naming the part when its file is no longer the size described.
Status SeedPart(PayloadStore& store, int fd, const BundlePart& part, const DigestBatches& rule, const SigningKey& key,
                const PlanId& plan);

// The last step on disk: the complete DATA_DIR/NAME.allgather becomes DATA_DIR/NAME/ with one
// file per part (built in a scratch directory named by `tag`, then swapped in whole), and the
// bundle and its recorded chunk list go.
Status SplitBundle(const std::string& data_dir, const std::string& bundle_name, const std::vector<BundlePart>& parts,
                   uint64_t chunk_bytes, const std::string& tag, bool sync);

}  // namespace gridcast
