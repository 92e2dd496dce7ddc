#include "daemon/participant/plan_payload.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "collectives/validate_plan.h"
#include "common/crypto.h"
#include "common/hex.h"
#include "proto/plan_codec.h"
#include "proto/plan_slice.h"

namespace gridcast {

Result<PayloadIdentity> IdentityFromProto(const v1::Payload& payload) {
  GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(payload.chunk_bytes()));
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(payload.digest()));
  if (payload.chunk_hashes().empty() && payload.size_bytes() > 0) {
    // Streamed: the digests come in batches signed with the plan's key, or each part's.
    if ((payload.digest_key().empty() && payload.parts().empty()) || !payload.weak_checksums().empty()) {
      return Status::InvalidArgument("a payload without its chunk list needs a digest_key, and no weak checksums");
    }
    PayloadIdentity identity;
    identity.size_bytes = payload.size_bytes();
    identity.chunk_bytes = payload.chunk_bytes();
    identity.digest = digest;
    if (!payload.sha256().empty()) {  // known when the source read the payload first
      if (payload.sha256().size() != sizeof(Digest)) return Status::InvalidArgument("a payload's sha256 is not 32 bytes");
      std::copy(payload.sha256().begin(), payload.sha256().end(), identity.sha256.begin());
    }
    if (!payload.chunk_list_sha256().empty()) {  // likewise
      if (payload.chunk_list_sha256().size() != sizeof(Digest)) {
        return Status::InvalidArgument("a payload's chunk_list_sha256 has " +
                                       std::to_string(payload.chunk_list_sha256().size()) + " bytes, not " +
                                       std::to_string(sizeof(Digest)));
      }
      Digest& announced = identity.chunk_list_digest.emplace();
      std::copy(payload.chunk_list_sha256().begin(), payload.chunk_list_sha256().end(), announced.begin());
    }
    identity.streams_weak_checksums = payload.weak_checksums_streamed();
    return identity;
  }
  if (payload.weak_checksums_streamed() || !payload.chunk_list_sha256().empty()) {
    return Status::InvalidArgument("a payload that lists its chunks streams nothing");
  }
  GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity identity,
                            DecodePayloadIdentity(digest, payload.size_bytes(), payload.chunk_bytes(),
                                                  payload.chunk_hashes(), payload.sha256()));
  GRIDCAST_ASSIGN_OR_RETURN(identity.weak_checksums,
                            DecodeWeakChecksums(payload.weak_checksums(), identity.NumChunks()));
  return identity;
}

std::vector<BundlePart> BundlePartsFromProto(const v1::Payload& payload) {
  std::vector<BundlePart> parts;
  for (const v1::Part& p : payload.parts()) {
    parts.push_back(BundlePart{p.member(), p.name(), p.size_bytes(), p.first_chunk(), p.chunks(), p.path(), p.in_memory()});
  }
  return parts;
}

Result<std::optional<PartDigests>> PartDigestsOf(const v1::Payload& payload) {
  if (payload.parts().empty()) return std::optional<PartDigests>();
  if (!payload.digest_key().empty() || !payload.chunk_hashes().empty()) {
    return Status::InvalidArgument("an allgather's holders sign their parts' digests: its payload has no key and no list");
  }
  std::vector<uint64_t> segments;
  std::vector<PublicKey> keys;
  for (const v1::Part& part : payload.parts()) {
    Result<PublicKey> key = PublicKeyFromBytes(part.digest_key());
    if (!key.ok()) return key.status().WithContext("the digest_key of part '" + part.name() + "'");
    keys.push_back(*key);
    segments.push_back(part.chunks());
  }
  return std::optional<PartDigests>(PartDigests{DigestBatches(payload.chunk_bytes(), segments), std::move(keys)});
}

Result<std::optional<Digest>> PlanChunkListDigest(const v1::Plan& plan) {
  GRIDCAST_ASSIGN_OR_RETURN(const PayloadIdentity identity, IdentityFromProto(plan.payload()));
  if (!identity.Streams()) return std::optional<Digest>(identity.ListDigest());
  return identity.chunk_list_digest;
}

Result<Digest> PlanAgreementDigest(const v1::Plan& plan) {
  GRIDCAST_ASSIGN_OR_RETURN(const std::optional<Digest> list, PlanChunkListDigest(plan));
  if (list) return *list;
  const v1::Payload& payload = plan.payload();
  Sha256Stream header;
  auto update_string = [&header](std::string_view field) {
    const uint64_t length = field.size();
    header.Update({reinterpret_cast<const uint8_t*>(&length), sizeof length});
    header.Update(AsBytes(field));
  };
  update_string("gridcast-payload-header-1");
  const uint64_t numbers[] = {payload.size_bytes(), payload.chunk_bytes(), static_cast<uint64_t>(payload.digest()),
                              payload.weak_checksums_streamed() ? 1u : 0u, payload.directory() ? 1u : 0u};
  header.Update({reinterpret_cast<const uint8_t*>(numbers), sizeof numbers});
  update_string(payload.name());
  update_string(payload.digest_key());
  update_string(payload.base());
  for (const v1::Part& part : payload.parts()) {
    const uint64_t place[] = {part.member(), part.size_bytes(), part.first_chunk(), part.chunks(),
                              part.in_memory() ? 1u : 0u};
    header.Update({reinterpret_cast<const uint8_t*>(place), sizeof place});
    update_string(part.name());
    update_string(part.path());
    update_string(part.digest_key());
    update_string(part.key_nonce());
  }
  return header.Finish();
}

Digest MembersDigest(const v1::Plan& plan) {
  Sha256Stream stream;
  auto update_u32 = [&stream](uint32_t value) {
    const std::array<uint8_t, 4> bytes = {static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
                                          static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
    stream.Update(bytes);
  };
  update_u32(WholeMemberCount(plan));
  for (int entry = 0; entry < plan.members_size(); ++entry) {
    update_u32(WholeIndexOf(plan, entry));
    stream.Update(AsBytes(plan.members(entry).name()));
    stream.Update(AsBytes(std::string_view("\0", 1)));
  }
  return stream.Finish();
}

}  // namespace gridcast
