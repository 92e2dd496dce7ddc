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

// The digest of each chunk of the `size_bytes` bytes at the start of `fd`, the last chunk
// padded with zeros to chunk_bytes. DataLoss when the file is shorter.
Result<std::vector<Digest>> HashPaddedChunks(int fd, uint64_t size_bytes, uint64_t chunk_bytes, ChunkDigest digest);

// Writes the part (read from `fd`, padded) into the bundle as verified chunks, skipping those
// the store holds already (a resumed member). DataLoss naming the part when its bytes no
// longer hash to what its holder described: the file changed since.
Status SeedPart(PayloadStore& store, int fd, const BundlePart& part);

// The last step on disk: the complete DATA_DIR/NAME.allgather becomes DATA_DIR/NAME/ with one
// file per part (built in a scratch directory named by `tag`, then swapped in whole), and the
// bundle and its recorded chunk list go.
Status SplitBundle(const std::string& data_dir, const std::string& bundle_name, const std::vector<BundlePart>& parts,
                   uint64_t chunk_bytes, const std::string& tag, bool sync);

}  // namespace gridcast
