#include "daemon/store/payload_identity.h"
#include "common/units.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace gridcast {

Result<PayloadIdentity> DecodePayloadIdentity(ChunkDigest digest, uint64_t size_bytes, uint64_t chunk_bytes,
                                              std::string_view chunk_hashes, std::string_view sha256) {
  if (chunk_bytes == 0) return Status::InvalidArgument("a payload's chunk size is 0");
  PayloadIdentity identity;
  identity.size_bytes = size_bytes;
  identity.chunk_bytes = chunk_bytes;
  identity.digest = digest;
  GRIDCAST_ASSIGN_OR_RETURN(identity.chunk_hashes, DecodeChunkHashes(digest, chunk_hashes, identity.NumChunks()));
  if (sha256.size() != sizeof(Digest)) {
    return Status::InvalidArgument("a payload's sha256 has " + std::to_string(sha256.size()) + " bytes, not " +
                                   std::to_string(sizeof(Digest)));
  }
  std::memcpy(identity.sha256.data(), sha256.data(), sizeof(Digest));
  return identity;
}

std::string EncodeWeakChecksums(const std::vector<uint32_t>& weak_checksums) {
  std::string encoded;
  encoded.reserve(weak_checksums.size() * 4);
  for (uint32_t weak : weak_checksums) {
    for (int shift = 0; shift < 32; shift += 8) encoded.push_back(static_cast<char>(weak >> shift));
  }
  return encoded;
}

Result<std::vector<uint32_t>> DecodeWeakChecksums(std::string_view encoded, uint64_t chunks) {
  if (encoded.empty()) return std::vector<uint32_t>{};
  if (encoded.size() / 4 != chunks || encoded.size() % 4 != 0) {
    return Status::InvalidArgument("a payload's weak checksums are " + std::to_string(encoded.size()) +
                                   " bytes, not 4 for each of its " + std::to_string(chunks) + " chunks");
  }
  std::vector<uint32_t> weak_checksums(chunks);
  for (uint64_t c = 0; c < chunks; ++c) {
    for (int i = 0; i < 4; ++i) {
      weak_checksums[c] |= static_cast<uint32_t>(static_cast<uint8_t>(encoded[c * 4 + i])) << (8 * i);
    }
  }
  return weak_checksums;
}

uint64_t PayloadIdentity::NumChunks() const {
  return CeilDiv(size_bytes, chunk_bytes);
}

uint64_t PayloadIdentity::LargestChunk() const { return std::min<uint64_t>(chunk_bytes, std::max<uint64_t>(size_bytes, 1)); }

uint64_t PayloadIdentity::ChunkSize(uint64_t chunk) const {
  const uint64_t offset = chunk * chunk_bytes;
  return offset >= size_bytes ? 0 : std::min(chunk_bytes, size_bytes - offset);
}

Digest PayloadIdentity::Fingerprint() const {
  Sha256Stream stream;
  const uint64_t header[3] = {size_bytes, chunk_bytes, static_cast<uint64_t>(digest)};
  stream.Update({reinterpret_cast<const uint8_t*>(header), sizeof header});
  for (const Digest& d : chunk_hashes) stream.Update(d);
  stream.Update(sha256);
  return stream.Finish();
}

}  // namespace gridcast
