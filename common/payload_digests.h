// The digests a payload is known by before it moves: the digest of every chunk (SHA-256 or
// XXH3-128, common/chunk_digest.h) and the SHA-256 of the whole payload. The daemon computes them over a file it sends; the library over a caller's
// buffer it hands to the daemon still being written (BroadcastRequest.fill).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/chunk_digest.h"
#include "common/crypto.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct PayloadDigests {
  std::vector<Digest> chunk_hashes;  // chunk c is bytes [c * chunk_bytes, min(size, (c + 1) * chunk_bytes))
  Digest sha256{};
};

// What PayloadDigests::sha256 is. The SHA-256 of the whole payload is sequential (one core) and
// the slowest part of hashing a buffer: a payload nobody keeps after the broadcast (memory lent
// by an MPI rank) is known by its chunk list's digest instead, as an allgather's bundle is.
enum class WholeDigest {
  kSha256,     // SHA-256 of the whole payload
  kChunkList,  // ChunkListDigest of the chunk hashes: every thread hashes chunks
};

// Reads `length` bytes at `offset` of the payload: into `scratch` (resized as needed), or as
// a view of bytes held elsewhere. The view lives until the next call with the same scratch.
using ReadPayloadPiece =
    std::function<Result<std::span<const uint8_t>>(uint64_t offset, uint64_t length, std::vector<uint8_t>& scratch)>;

// Sees each chunk's bytes where they are hashed, for what else a caller computes per chunk
// while they are in the cache (a source's weak checksums, docs/delta.md).
using VisitChunk = std::function<void(uint64_t chunk, std::span<const uint8_t> bytes)>;

// Hashes a payload of `size_bytes` in chunks of `chunk_bytes` (> 0) on every core: the whole
// payload (sequential by nature) on one thread when `whole` is kSha256, the chunks (with
// `digest`) split among the others. `read` and `visit` (when given) are called from several
// threads at once, `visit` once per chunk. The first error of `read` is returned.
Result<PayloadDigests> DigestPayload(uint64_t size_bytes, uint64_t chunk_bytes, ChunkDigest digest,
                                     const ReadPayloadPiece& read, WholeDigest whole = WholeDigest::kSha256,
                                     const VisitChunk& visit = {});

}  // namespace gridcast
