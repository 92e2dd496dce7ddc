#include "common/chunk_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "common/hex.h"
#include "common/sha256_multibuffer.h"

namespace gridcast {

size_t DigestBytes(ChunkDigest kind) { return kind == ChunkDigest::kXxh3 ? sizeof(XXH128_canonical_t) : sizeof(Digest); }

std::string_view DigestName(ChunkDigest kind) { return kind == ChunkDigest::kXxh3 ? "xxh3" : "sha256"; }

Result<ChunkDigest> ParseChunkDigest(std::string_view name) {
  if (name == "sha256") return ChunkDigest::kSha256;
  if (name == "xxh3") return ChunkDigest::kXxh3;
  return Status::InvalidArgument("unknown chunk digest '" + std::string(name) + "' (sha256 or xxh3)");
}

Result<ChunkDigest> ChunkDigestFromValue(uint32_t value) {
  if (value == static_cast<uint32_t>(ChunkDigest::kSha256)) return ChunkDigest::kSha256;
  if (value == static_cast<uint32_t>(ChunkDigest::kXxh3)) return ChunkDigest::kXxh3;
  return Status::InvalidArgument("unknown chunk digest " + std::to_string(value));
}

Digest HashChunk(ChunkDigest kind, std::span<const uint8_t> data) {
  if (kind == ChunkDigest::kSha256) return Sha256(data);
  Digest out{};
  XXH128_canonical_t canonical;  // big-endian: the same bytes on every host
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(data.data(), data.size()));
  std::memcpy(out.data(), canonical.digest, sizeof canonical.digest);
  return out;
}

bool HashesBestTogether(ChunkDigest kind) {
  static const bool supported = Sha256MultiBufferSupported();
  return kind == ChunkDigest::kSha256 && supported;
}

void HashChunks(ChunkDigest kind, std::span<const std::span<const uint8_t>> chunks, std::span<Digest> out) {
  // Below 7 a batch costs more than hashing one by one on SHA-NI (a group of 8 runs on 8 lanes
  // at 1.3x, a group of up to 16 costs a full 16-lane pass).
  constexpr size_t kWorthABatch = 7;
  constexpr size_t kLanes = kChunksHashedTogether;
  size_t i = 0;
  if (HashesBestTogether(kind)) {
    while (chunks.size() - i >= kWorthABatch) {
      const size_t count = std::min(kLanes, chunks.size() - i);
      const uint8_t* data[kLanes];
      size_t length[kLanes];
      uint8_t digests[kLanes][32];
      for (size_t k = 0; k < count; ++k) {
        data[k] = chunks[i + k].data();
        length[k] = chunks[i + k].size();
      }
      Sha256MultiBuffer(data, length, count, digests);
      for (size_t k = 0; k < count; ++k) std::memcpy(out[i + k].data(), digests[k], sizeof digests[k]);
      i += count;
    }
  }
  for (; i < chunks.size(); ++i) out[i] = HashChunk(kind, chunks[i]);
}

std::string EncodeChunkHashes(ChunkDigest kind, std::span<const Digest> hashes) {
  const size_t width = DigestBytes(kind);
  std::string out;
  out.reserve(hashes.size() * width);
  for (const Digest& d : hashes) out.append(reinterpret_cast<const char*>(d.data()), width);
  return out;
}

Result<std::vector<Digest>> DecodeChunkHashes(ChunkDigest kind, std::string_view bytes, uint64_t chunks) {
  const size_t width = DigestBytes(kind);
  if (bytes.size() % width != 0 || bytes.size() / width != chunks) {
    return Status::InvalidArgument("a payload of " + std::to_string(chunks) + " chunks needs " +
                                   std::to_string(chunks) + " " + std::string(DigestName(kind)) + " digests of " +
                                   std::to_string(width) + " bytes; the list has " + std::to_string(bytes.size()) +
                                   " bytes");
  }
  std::vector<Digest> hashes(chunks);
  for (uint64_t c = 0; c < chunks; ++c) std::memcpy(hashes[c].data(), bytes.data() + c * width, width);
  return hashes;
}

Digest ChunkListDigest(ChunkDigest kind, std::span<const Digest> hashes) {
  if (kind == ChunkDigest::kSha256) {
    return Sha256({reinterpret_cast<const uint8_t*>(hashes.data()), hashes.size() * sizeof(Digest)});
  }
  return Sha256(AsBytes(EncodeChunkHashes(kind, hashes)));
}

}  // namespace gridcast
