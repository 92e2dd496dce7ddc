#include "daemon/participant/request_checks.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "collectives/validate_plan.h"
#include "common/origin_url.h"
#include "common/safe_path.h"
#include "daemon/store/payload_identity.h"
#include "proto/plan_codec.h"

namespace gridcast {

Status CheckSeconds(std::string_view field, double seconds, double at_most) {
  if (!(seconds >= 0 && seconds <= at_most)) {  // false for NaN too
    return Status::InvalidArgument(std::string(field) + ": seconds from 0 to " +
                                   (at_most == kMaxRequestSeconds ? std::string("a year")
                                                                  : std::to_string(static_cast<int64_t>(at_most))));
  }
  return Status::Ok();
}

Status CheckBroadcastRequest(const v1::BroadcastRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(CheckBroadcastOptions(request));
  if (request.has_origin()) {
    if (!request.payload_path().empty() || request.has_fill() || request.probe_bytes() > 0 ||
        request.from_registered_memory()) {
      return Status::InvalidArgument("a payload at an origin has no path, fill, probe or lent memory");
    }
    return CheckOriginSource(request.origin());
  }
  if (request.from_registered_memory()) {
    if (!request.payload_path().empty() || !request.has_fill() || request.name().empty() || request.probe_bytes() > 0) {
      return Status::InvalidArgument("a payload in lent memory has a name and a declared fill, and no path");
    }
  } else if (request.probe_bytes() > 0) {
    if (!request.payload_path().empty()) return Status::InvalidArgument("a probe broadcast takes no payload path");
  } else if (request.payload_path().empty()) {
    return Status::InvalidArgument("no payload path");
  }
  if (request.payload_path().size() > kMaxRequestPathBytes ||
      request.payload_path().find('\0') != std::string::npos) {
    return Status::InvalidArgument("the payload path is longer than 4096 bytes or holds a NUL");
  }
  if (request.has_fill()) {
    const v1::PayloadFill& fill = request.fill();
    if (request.probe_bytes() > 0) return Status::InvalidArgument("a probe broadcast is not filled by its sender");
    if (request.chunk_bytes() == 0) return Status::InvalidArgument("a filled payload needs its chunk size");
    if (DeclaresOnlyTheSize(fill)) {
      if (request.from_registered_memory()) {
        return Status::InvalidArgument("a payload in lent memory declares its chunks' digests");
      }
      if (!fill.weak_checksums().empty()) {
        return Status::InvalidArgument("a filled payload declares weak checksums only with its chunks' digests");
      }
      return DeclaredSha256(fill.sha256()).status().WithContext("a filled payload");
    }
    PayloadIdentity size;  // how many chunks, before decoding their hashes
    size.size_bytes = fill.size_bytes();
    size.chunk_bytes = request.chunk_bytes();
    if (size.NumChunks() > kMaxFilledChunks) {
      return Status::InvalidArgument("a filled payload has at most " + std::to_string(kMaxFilledChunks) +
                                     " chunks: use larger chunks");
    }
    const ChunkDigest digest = *ChunkDigestFromProto(request.digest());  // CheckBroadcastOptions checked it
    GRIDCAST_RETURN_IF_ERROR(DecodePayloadIdentity(digest, fill.size_bytes(), request.chunk_bytes(),
                                                   fill.chunk_hashes(), fill.sha256())
                                 .status()
                                 .WithContext("a filled payload"));
    GRIDCAST_RETURN_IF_ERROR(
        DecodeWeakChecksums(fill.weak_checksums(), size.NumChunks()).status().WithContext("a filled payload"));
  }
  return Status::Ok();
}

Result<std::optional<Digest>> DeclaredSha256(const std::string& sha256) {
  if (sha256.empty()) return std::optional<Digest>();
  if (sha256.size() != sizeof(Digest)) {
    return Status::InvalidArgument("a payload's sha256 has " + std::to_string(sha256.size()) + " bytes, not " +
                                   std::to_string(sizeof(Digest)));
  }
  Digest digest{};
  std::memcpy(digest.data(), sha256.data(), sizeof(Digest));
  return std::optional<Digest>(digest);
}

Status CheckOriginSource(const v1::OriginSource& origin) {
  const std::string& url = origin.url();
  if (!IsHttpUrl(url)) {
    return Status::InvalidArgument("an origin is an http:// or https:// URL");
  }
  const auto control = [](unsigned char c) { return c < 0x20 || c == 0x7f; };
  if (url.size() > kMaxOriginUrlBytes || std::any_of(url.begin(), url.end(), control)) {
    return Status::InvalidArgument("the origin's URL is longer than " + std::to_string(kMaxOriginUrlBytes) +
                                   " bytes or holds a control character");
  }
  if (origin.headers_size() > kMaxOriginHeaders) {
    return Status::InvalidArgument("at most " + std::to_string(kMaxOriginHeaders) + " origin headers");
  }
  for (int i = 0; i < origin.headers_size(); ++i) {
    const std::string& header = origin.headers(i);
    const size_t colon = header.find(':');
    // A tab is allowed in a value; any other control character could split the line.
    const bool broken = std::any_of(header.begin(), header.end(), [&](unsigned char c) { return control(c) && c != '\t'; });
    if (colon == std::string::npos || colon == 0 || header.size() > kMaxOriginHeaderBytes || broken) {
      return Status::InvalidArgument("origin header " + std::to_string(i + 1) +
                                     " is not one 'Name: value' line of at most " +
                                     std::to_string(kMaxOriginHeaderBytes) + " bytes (its text is not shown)");
    }
  }
  if (origin.ca_pem().size() > kMaxOriginCaBytes) {
    return Status::InvalidArgument("the origin's CA certificates are longer than 1 MiB");
  }
  return DeclaredSha256(origin.sha256()).status().WithContext("an origin");
}

Status CheckPlanBroadcastRequest(const v1::PlanBroadcastRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(CheckBroadcastOptions(request.broadcast()));
  const uint64_t chunk =
      request.broadcast().chunk_bytes() > 0 ? request.broadcast().chunk_bytes() : kLargestDefaultChunkBytes;
  if (request.size_bytes() / chunk > kMaxPlanChunks) {
    return Status::InvalidArgument("a plan for a filled payload has at most " + std::to_string(kMaxPlanChunks) +
                                   " chunks of " + std::to_string(chunk) + " bytes");
  }
  return Status::Ok();
}

Status CheckBroadcastOptions(const v1::BroadcastRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("timeout_s", request.timeout_s(), kMaxRequestSeconds));
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("stall_timeout_s", request.stall_timeout_s(), kMaxRequestSeconds));
  if (!request.name().empty()) GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(request.name()));
  if (!request.base().empty()) {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(request.base()).WithContext("the base"));
    if (request.no_reuse()) return Status::InvalidArgument("a base is searched only with reuse on");
  }
  if (request.members_size() > kMaxRequestMembers) {
    return Status::InvalidArgument("a request names at most " + std::to_string(kMaxRequestMembers) + " members");
  }
  for (const std::string& member : request.members()) {
    if (member.empty() || member.size() > 255) return Status::InvalidArgument("a member name is 1 to 255 bytes");
  }
  if (request.algorithm().size() > 64) return Status::InvalidArgument("an algorithm name is at most 64 bytes");
  if (request.chunk_bytes() > 0) GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(request.chunk_bytes()));
  if (request.streams() > static_cast<uint32_t>(kMaxStreamsPerEdge)) {
    return Status::InvalidArgument("at most " + std::to_string(kMaxStreamsPerEdge) + " streams per edge");
  }
  if (!v1::PlanMode_IsValid(request.mode())) return Status::InvalidArgument("unknown mode");
  GRIDCAST_RETURN_IF_ERROR(ChunkDigestFromProto(request.digest()).status());
  if (request.topology_yaml().size() > kMaxTopologyYamlBytes) {
    return Status::InvalidArgument("a request's topology is at most 1 MiB");
  }
  return Status::Ok();
}

namespace {

Status CheckPartPath(const std::string& path) {
  if (path.empty() || path.size() > kMaxRequestPathBytes || path.find('\0') != std::string::npos) {
    return Status::InvalidArgument("a part's path is 1 to 4096 bytes without NUL");
  }
  return Status::Ok();
}

}  // namespace

Status CheckAllgatherRequest(const v1::AllgatherRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("timeout_s", request.timeout_s(), kMaxRequestSeconds));
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("stall_timeout_s", request.stall_timeout_s(), kMaxRequestSeconds));
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(request.name()).WithContext("the allgather's name"));
  if (request.parts_size() == 0) return Status::InvalidArgument("an allgather needs parts");
  if (request.parts_size() > kMaxRequestMembers) {
    return Status::InvalidArgument("an allgather has at most " + std::to_string(kMaxRequestMembers) + " parts");
  }
  for (const v1::AllgatherPart& part : request.parts()) {
    if (part.member().empty() || part.member().size() > 255) {
      return Status::InvalidArgument("a member name is 1 to 255 bytes");
    }
    GRIDCAST_RETURN_IF_ERROR(CheckPartPath(part.path()).WithContext("member '" + part.member() + "'"));
    if (!part.name().empty() &&
        (part.name().find('/') != std::string::npos || !CheckPayloadName(part.name()).ok())) {
      return Status::InvalidArgument("part name '" + part.name() + "' is not one safe path component");
    }
  }
  if (request.algorithm().size() > 64) return Status::InvalidArgument("an algorithm name is at most 64 bytes");
  if (request.chunk_bytes() > 0) GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(request.chunk_bytes()));
  if (request.streams() > static_cast<uint32_t>(kMaxStreamsPerEdge)) {
    return Status::InvalidArgument("at most " + std::to_string(kMaxStreamsPerEdge) + " streams per edge");
  }
  if (request.topology_yaml().size() > kMaxTopologyYamlBytes) {
    return Status::InvalidArgument("a request's topology is at most 1 MiB");
  }
  return ChunkDigestFromProto(request.digest()).status();
}

Status CheckDescribePartRequest(const v1::DescribePartRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(CheckPartPath(request.path()));
  if (request.chunk_bytes() > 0) GRIDCAST_RETURN_IF_ERROR(CheckChunkBytes(request.chunk_bytes()));
  return ChunkDigestFromProto(request.digest()).status();
}

Result<PlanId> CheckStartRequest(const v1::StartRequest& request) {
  GRIDCAST_RETURN_IF_ERROR(CheckSeconds("source_started_ago_s", request.source_started_ago_s(), kMaxSourceStartedAgoS));
  return PlanId::FromBytes(request.plan_id());
}

Result<PlanId> CheckCancelRequest(const v1::CancelRequest& request) { return PlanId::FromBytes(request.plan_id()); }

Result<PlanId> CheckPatchRequest(const v1::PatchRequest& request) {
  if (request.patches_size() == 0 || request.patches_size() > kMaxPatchesPerRequest) {
    return Status::InvalidArgument("a patch request carries 1 to " + std::to_string(kMaxPatchesPerRequest) +
                                   " patches, not " + std::to_string(request.patches_size()));
  }
  for (int i = 0; i < request.patches_size(); ++i) {
    if (request.patches(i).version() != static_cast<uint32_t>(i + 1)) {
      return Status::InvalidArgument("a patch request's patches are versions 1 to n in order; its patch " +
                                     std::to_string(i + 1) + " has version " +
                                     std::to_string(request.patches(i).version()));
    }
  }
  return PlanId::FromBytes(request.plan_id());
}

std::string CancelReason(const v1::CancelRequest& request) {
  std::string reason = request.reason().empty() ? "cancelled" : request.reason();
  if (reason.size() > kMaxCancelReasonBytes) {
    size_t cut = kMaxCancelReasonBytes;
    while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;
    reason.resize(cut);
  }
  return reason;
}

Status CheckStatusRequest(const v1::StatusRequest& request) {
  if (!request.plan_id().empty()) GRIDCAST_RETURN_IF_ERROR(PlanId::FromBytes(request.plan_id()).status());
  if (request.subtree() && request.plan_id().empty()) return Status::InvalidArgument("a subtree status names a plan");
  if (request.detail() && !request.subtree()) return Status::InvalidArgument("detail is for a subtree status");
  return Status::Ok();
}

}  // namespace gridcast
