// Which chunks of a new payload an earlier copy already holds, wherever they sit in it (issue
// 36): an insertion shifts every byte after it, so looking only at the same offsets is not
// enough. Two ways, compared in docs/delta.md:
//
// - FindHeldChunks (rsync's): the payload keeps its fixed-size chunks; the plan carries a weak
//   checksum per chunk beside its digest. The old copy is scanned once with a window of each
//   chunk size rolled one byte at a time; where the weak checksum is some chunk's, the window
//   is hashed with the chunk digest, and a match counts only when the digests agree. After a
//   match the window jumps a whole chunk ahead, so an unchanged copy costs one digest per
//   chunk, as a full verification would. Only the size most chunks have is rolled; a chunk of
//   another size (a fixed plan's shorter last one) is looked for next to its neighbours'
//   matches and at the copy's end.
// - FindHeldContentChunks: the chunk boundaries are cut where the content says (content_chunks.h)
//   on both sides, so an old copy's pieces are hashed and looked up by digest.
//
// Either way a chunk counts as held only when its bytes in the old copy have its digest: a
// corrupt old copy yields fewer held chunks, never a wrong one. Memory is bounded by the read
// window (kScanWindowBytes plus the largest chunk), not the copy. Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/chunk_digest.h"
#include "delta/byte_source.h"
#include "delta/content_chunks.h"

namespace gridcast {

// One chunk of the new payload as the plan describes it.
struct ChunkSummary {
  uint64_t size = 0;
  uint32_t weak = 0;  // WeakChecksum of its bytes (FindHeldChunks only)
  Digest digest{};    // HashChunk(kind, its bytes)
};

inline constexpr uint64_t kNotHeld = UINT64_MAX;
inline constexpr size_t kScanWindowBytes = 8 << 20;

// Sees a chunk found in the old copy with the bytes that hashed to its digest (valid during
// the call): a caller that keeps them need not read and hash them again.
using OnHeldChunk = std::function<void(size_t chunk, std::span<const uint8_t> bytes)>;

// Per chunk, the offset in `old` of bytes with its digest, or kNotHeld. The first match in the
// old copy wins; `on_found` (when given) sees each chunk once, as it is found.
Result<std::vector<uint64_t>> FindHeldChunks(const ByteSource& old, ChunkDigest kind,
                                             std::span<const ChunkSummary> chunks,
                                             const OnHeldChunk& on_found = {});

// The same where `chunks` were cut by `cutter` from the new payload: `old` is cut by it too.
Result<std::vector<uint64_t>> FindHeldContentChunks(const ByteSource& old, ChunkDigest kind,
                                                    std::span<const ChunkSummary> chunks,
                                                    const ContentCutter& cutter);

// Summaries of `payload` cut in fixed `chunk_bytes` (the last one shorter), weak checksums
// included: what a source computes for FindHeldChunks.
std::vector<ChunkSummary> SummarizeFixedChunks(std::span<const uint8_t> payload, uint64_t chunk_bytes,
                                               ChunkDigest kind);

}  // namespace gridcast
