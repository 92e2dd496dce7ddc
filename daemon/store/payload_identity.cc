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
