// PayloadIdentity: what a payload is known by before it moves (its size, its chunks' digests,
// the digest of the whole), and how a plan or a sender declares it on the wire. Pure; shared by
// the stores, the coordinators and the request checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/chunk_digest.h"
#include "common/crypto.h"
#include "delta/rolling_checksum.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct PayloadIdentity {
  uint64_t size_bytes = 0;
  uint64_t chunk_bytes = 0;
  ChunkDigest digest = ChunkDigest::kSha256;  // what chunk_hashes are
  std::vector<Digest> chunk_hashes;
  Digest sha256{};  // of the whole payload, whatever the chunk digest
  // The weak checksum of every chunk (delta/rolling_checksum.h), or none: what a member looks
  // for in an earlier copy it holds. Not part of the fingerprint: it follows from the bytes.
  std::vector<uint32_t> weak_checksums;
  // Where chunk_hashes is empty and the payload has chunks, their digests arrive during the
  // broadcast in signed batches (docs/streamed-digests.md), the last of which closes the list
  // with its digest (ChunkListDigest) and the payload's SHA-256. This is the list's digest when
  // the source announced it at Prepare (it read the payload first); the batches carry the weak
  // checksums when streams_weak_checksums.
  std::optional<Digest> chunk_list_digest;
  bool streams_weak_checksums = false;

  uint64_t NumChunks() const;
  uint64_t ChunkSize(uint64_t chunk) const;
  // The size of the largest chunk (at least 1): what a buffer for any one chunk needs.
  uint64_t LargestChunk() const;
  // Digest of everything above: two stores hold the same payload iff fingerprints match.
  Digest Fingerprint() const;
  // ChunkListDigest of chunk_hashes: what a finished member reports. REQUIRES: !Streams().
  Digest ListDigest() const { return ChunkListDigest(digest, chunk_hashes); }
  // Whether the chunk digests arrive during the broadcast rather than with the identity.
  bool Streams() const { return chunk_hashes.empty() && NumChunks() > 0; }
  // Whether members search an earlier copy with weak checksums (delta/held_chunks.h).
  bool OffersReuse() const { return !weak_checksums.empty() || streams_weak_checksums; }
};

// The identity a plan or a sender declares, as it travels: `chunk_hashes` as
// EncodeChunkHashes writes them, `sha256` the whole payload's 32 bytes. InvalidArgument naming
// what is wrong: no chunk size, a list of another length, a digest that is not 32 bytes.
Result<PayloadIdentity> DecodePayloadIdentity(ChunkDigest digest, uint64_t size_bytes, uint64_t chunk_bytes,
                                              std::string_view chunk_hashes, std::string_view sha256);

// Whether a source computes its chunks' weak checksums (the plan then offers reuse).
enum class WeakChecksums { kSkip, kCompute };

}  // namespace gridcast
