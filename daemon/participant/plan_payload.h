// What a Plan proto says about its payload and members, decoded and checked: the payload's
// identity (chunk list), an allgather's parts, and the digests a member echoes to Prepare so
// its source can compare views field by field.
#pragma once

#include <vector>

#include "include/gridcast/result.h"
#include "daemon/store/allgather_bundle.h"
#include "daemon/store/payload_identity.h"
#include "proto/plan.pb.h"

namespace gridcast {

Result<PayloadIdentity> IdentityFromProto(const v1::Payload& payload);

std::vector<BundlePart> BundlePartsFromProto(const v1::Payload& payload);

// The ChunkListDigest that Prepare will echo for `plan`, found without preparing anything.
Result<Digest> PlanChunkListDigest(const v1::Plan& plan);

// Digest of the member list as the plan (or slice) gives it, indices with names.
Digest MembersDigest(const v1::Plan& plan);

}  // namespace gridcast
