// What a Plan proto says about its payload and members, decoded and checked: the payload's
// identity (chunk list), an allgather's parts, and the digests a member echoes to Prepare so
// its source can compare views field by field.
#pragma once

#include <optional>
#include <vector>

#include "include/gridcast/result.h"
#include "common/digest_batches.h"
#include "common/signing.h"
#include "daemon/store/allgather_bundle.h"
#include "daemon/store/payload_identity.h"
#include "proto/plan.pb.h"

namespace gridcast {

Result<PayloadIdentity> IdentityFromProto(const v1::Payload& payload);

std::vector<BundlePart> BundlePartsFromProto(const v1::Payload& payload);

// An allgather whose holders sign their own parts' digests (Part.digest_key): the batch rule
// cut at the parts (one segment each) and each part's key, by segment. None for a payload
// without parts; InvalidArgument when a part lacks a well-formed key or nonce.
struct PartDigests {
  DigestBatches rule;
  std::vector<PublicKey> keys;
};
Result<std::optional<PartDigests>> PartDigestsOf(const v1::Payload& payload);

// What Prepare echoes for `plan` (PrepareResponse.chunk_hashes_sha256), found without
// preparing anything: ChunkListDigest of its payload's chunks where the plan lists them or
// announces their digest, else (a source that hashes as it sends) the SHA-256 of what the
// payload's header says (name, sizes, digest, key, reuse, directory, base, and an allgather's
// parts with their keys).
Result<Digest> PlanAgreementDigest(const v1::Plan& plan);
// ChunkListDigest of `plan`'s payload, where the plan lists the chunks or announces it.
Result<std::optional<Digest>> PlanChunkListDigest(const v1::Plan& plan);

// Digest of the member list as the plan (or slice) gives it, indices with names.
Digest MembersDigest(const v1::Plan& plan);

}  // namespace gridcast
