#include "common/chunk_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "common/enum_rows.h"
#include "common/hex.h"
#include "common/sha256_multibuffer.h"

namespace gridcast {
namespace {

Digest Xxh3Chunk(std::span<const uint8_t> data) {
  Digest out{};
  XXH128_canonical_t canonical;  // big-endian: the same bytes on every host
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(data.data(), data.size()));
  std::memcpy(out.data(), canonical.digest, sizeof canonical.digest);
  return out;
}

struct ChunkDigestRow {
  ChunkDigest kind;
  std::string_view name;       // DigestName
  std::string_view algorithm;  // DigestAlgorithm
  size_t bytes;                // DigestBytes
  Digest (*hash)(std::span<const uint8_t>);
  bool multibuffer;            // Sha256MultiBuffer can hash several at once
  bool faster_than_a_handoff;  // HashesFasterThanAHandoff
};

constexpr ChunkDigestRow kChunkDigestRows[] = {
    {ChunkDigest::kSha256, "sha256", "SHA-256", sizeof(Digest), &Sha256, true, false},
    {ChunkDigest::kXxh3, "xxh3", "XXH3-128", sizeof(XXH128_canonical_t), &Xxh3Chunk, false, true},
};

// Lists the digests for the check below (common/enum_rows.h).
constexpr bool IsChunkDigest(ChunkDigest kind) {
  switch (kind) {
    case ChunkDigest::kSha256:
    case ChunkDigest::kXxh3:
      return true;
  }
  return false;
}
static_assert(OneRowPerEnumerator<&ChunkDigestRow::kind>(kChunkDigestRows, IsChunkDigest));

const ChunkDigestRow& RowOf(ChunkDigest kind) {
  return *std::ranges::find(kChunkDigestRows, kind, &ChunkDigestRow::kind);
}

std::string DigestNames() {
  std::string names;
  for (const ChunkDigestRow& row : kChunkDigestRows) {
    if (!names.empty()) names += &row == std::end(kChunkDigestRows) - 1 ? " or " : ", ";
    names += row.name;
  }
  return names;
}

}  // namespace

size_t DigestBytes(ChunkDigest kind) { return RowOf(kind).bytes; }

std::string_view DigestName(ChunkDigest kind) { return RowOf(kind).name; }

std::string_view DigestAlgorithm(ChunkDigest kind) { return RowOf(kind).algorithm; }

Result<ChunkDigest> ParseChunkDigest(std::string_view name) {
  for (const ChunkDigestRow& row : kChunkDigestRows) {
    if (row.name == name) return row.kind;
  }
  return Status::InvalidArgument("unknown chunk digest '" + std::string(name) + "' (" + DigestNames() + ")");
}

Result<ChunkDigest> ChunkDigestFromValue(uint32_t value) {
  if (value <= 0xff && IsChunkDigest(static_cast<ChunkDigest>(value))) return static_cast<ChunkDigest>(value);
  return Status::InvalidArgument("unknown chunk digest " + std::to_string(value));
}

Digest HashChunk(ChunkDigest kind, std::span<const uint8_t> data) { return RowOf(kind).hash(data); }

bool HashesFasterThanAHandoff(ChunkDigest kind) { return RowOf(kind).faster_than_a_handoff; }

bool HashesBestTogether(ChunkDigest kind) {
  static const bool supported = Sha256MultiBufferSupported();
  return RowOf(kind).multibuffer && supported;
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
  if (DigestBytes(kind) == sizeof(Digest)) {  // the encoded list is the hashes as they are
    return Sha256({reinterpret_cast<const uint8_t*>(hashes.data()), hashes.size() * sizeof(Digest)});
  }
  return Sha256(AsBytes(EncodeChunkHashes(kind, hashes)));
}

}  // namespace gridcast
