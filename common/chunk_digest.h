// The digest each chunk of a broadcast is checked with, chosen per broadcast and recorded in
// its Plan (Payload.digest).
//
// - sha256: SHA-256 (OpenSSL, SHA-NI here: about 1.6 GB/s per core). Proves that a chunk is
//   the source's even where members do not trust each other: no member can make other bytes
//   that match.
// - xxh3: XXH3-128 (Debian's libxxhash: tens of GB/s per core). Catches corruption on a wire,
//   in memory or on a disk, but not a member that lies: anyone can make other bytes with the
//   same XXH3. For a cluster's own network whose data connections are authenticated (every
//   connection proves the cluster secret, or runs mutual TLS), where SHA-256 would be most of a
//   receiving member's CPU.
//
// Whatever the chunk digest, the end-to-end check is the SHA-256 of the list of chunk digests
// (ChunkListDigest), and the whole payload keeps its SHA-256.
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/crypto.h"
#include "include/gridcast/result.h"

namespace gridcast {

// Values are on the wire (frame headers) and on disk (chunk lists); do not renumber. The
// proto enum ChunkDigest (plan.proto) has the same values.
enum class ChunkDigest : uint8_t { kSha256 = 1, kXxh3 = 2 };

// A chunk digest is held in a Digest (32 bytes): its first DigestBytes(kind) bytes, the rest
// zero. On the wire and on disk only the first DigestBytes(kind) bytes travel.
size_t DigestBytes(ChunkDigest kind);
// "sha256" or "xxh3": the names of --digest, the cluster file's digest: and the summary.
std::string_view DigestName(ChunkDigest kind);
// "SHA-256" or "XXH3-128": the algorithm, as the printed summary names it.
std::string_view DigestAlgorithm(ChunkDigest kind);
// InvalidArgument naming the choices for anything but "sha256" and "xxh3".
Result<ChunkDigest> ParseChunkDigest(std::string_view name);
// InvalidArgument for a value no digest has (a byte off the wire or a disk).
Result<ChunkDigest> ChunkDigestFromValue(uint32_t value);

// The digest of one chunk's bytes.
Digest HashChunk(ChunkDigest kind, std::span<const uint8_t> data);
// The digests of several chunks, out[i] of chunks[i], as HashChunk gives them one by one; but
// SHA-256 hashes 7 to kChunksHashedTogether chunks at once where the CPU has AVX-512
// (sha256_multibuffer.h: 2.3x OpenSSL's SHA-NI per core on 16 chunks of equal size).
// REQUIRES: out.size() == chunks.size().
inline constexpr size_t kChunksHashedTogether = 16;
void HashChunks(ChunkDigest kind, std::span<const std::span<const uint8_t>> chunks, std::span<Digest> out);
// Whether HashChunks hashes several chunks of `kind` in less time than one by one (SHA-256 on a
// CPU with AVX-512).
bool HashesBestTogether(ChunkDigest kind);
// Whether a chunk hashes in less time than handing it to another thread and back costs: XXH3
// does a 256 KiB chunk in about 13 us per core, about what the two wake-ups of a handoff cost;
// SHA-256 takes 130 us, worth another core.
bool HashesFasterThanAHandoff(ChunkDigest kind);

// A chunk-hash list as it travels (Payload.chunk_hashes, PayloadFill, DescribePart) and is
// recorded: DigestBytes(kind) bytes per chunk, in chunk order.
std::string EncodeChunkHashes(ChunkDigest kind, std::span<const Digest> hashes);
// InvalidArgument unless `bytes` holds exactly `chunks` digests of `kind`.
Result<std::vector<Digest>> DecodeChunkHashes(ChunkDigest kind, std::string_view bytes, uint64_t chunks);

// SHA-256 of the encoded list: what Prepare agrees on and what a finished member reports.
Digest ChunkListDigest(ChunkDigest kind, std::span<const Digest> hashes);

}  // namespace gridcast
