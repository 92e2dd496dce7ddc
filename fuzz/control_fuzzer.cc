// The control requests whose checks need only the message (daemon/participant/request_checks.h:
// Broadcast, Start, Cancel, Status, Allgather, DescribePart, PlanBroadcast, Patch; fuzz_plan has
// Prepare), as any caller holding the secret could send them: the first byte picks the message,
// the rest is its protobuf encoding. What the checks accept must be what the code after them
// relies on.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "collectives/validate_plan.h"
#include "common/safe_path.h"
#include "daemon/participant/request_checks.h"
#include "proto/plan_codec.h"

using namespace gridcast;

namespace {

template <typename Message>
bool Parse(Message* message, const uint8_t* data, size_t size) {
  return message->ParseFromArray(data, static_cast<int>(size));
}

void Require(bool holds) {
  if (!holds) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0] % 8;
  ++data;
  --size;
  switch (which) {
    case 0: {
      v1::BroadcastRequest request;
      if (!Parse(&request, data, size) || !CheckBroadcastRequest(request).ok()) return 0;
      // The coordinator turns these into milliseconds and sizes without further checks.
      Require(std::isfinite(request.timeout_s()) && request.timeout_s() <= kMaxRequestSeconds);
      Require(std::isfinite(request.stall_timeout_s()) && request.stall_timeout_s() <= kMaxRequestSeconds);
      Require(request.streams() <= static_cast<uint32_t>(kMaxStreamsPerEdge));
      Require(request.chunk_bytes() == 0 || CheckChunkBytes(request.chunk_bytes()).ok());
      Require(request.name().empty() || CheckPayloadName(request.name()).ok());
      Require(request.probe_bytes() > 0 || !request.payload_path().empty());
      // A filled payload's identity is built from these without further checks; one that declares
      // only its size is hashed as it is sent, with at most the whole payload's sha256 declared.
      if (request.has_fill() && DeclaresOnlyTheSize(request.fill())) {
        Require(!request.from_registered_memory() && request.fill().weak_checksums().empty() &&
                (request.fill().sha256().empty() || request.fill().sha256().size() == 32));
      } else if (request.has_fill()) {
        const uint64_t chunks = request.fill().size_bytes() / request.chunk_bytes() +
                                (request.fill().size_bytes() % request.chunk_bytes() != 0 ? 1 : 0);
        Result<ChunkDigest> digest = ChunkDigestFromProto(request.digest());
        Require(digest.ok() &&
                request.fill().chunk_hashes().size() == DigestBytes(*digest) * chunks &&
                request.fill().sha256().size() == 32);
      }
      break;
    }
    case 1: {
      v1::StartRequest request;
      if (!Parse(&request, data, size)) return 0;
      Result<PlanId> id = CheckStartRequest(request);
      if (!id.ok()) return 0;
      Require(request.source_started_ago_s() >= 0 && request.source_started_ago_s() <= kMaxSourceStartedAgoS);
      Require(AsString(id->bytes()) == request.plan_id());
      break;
    }
    case 2: {
      v1::CancelRequest request;
      if (Parse(&request, data, size)) (void)CheckCancelRequest(request);
      break;
    }
    case 3: {
      v1::StatusRequest request;
      if (!Parse(&request, data, size) || !CheckStatusRequest(request).ok()) return 0;
      Require(!request.subtree() || PlanId::FromBytes(request.plan_id()).ok());
      break;
    }
    case 4: {
      v1::AllgatherRequest request;
      if (!Parse(&request, data, size) || !CheckAllgatherRequest(request).ok()) return 0;
      Require(std::isfinite(request.timeout_s()) && request.timeout_s() <= kMaxRequestSeconds);
      Require(request.parts_size() > 0 && CheckPayloadName(request.name()).ok());
      for (const v1::AllgatherPart& part : request.parts()) {
        Require(!part.path().empty() && !part.member().empty());
        Require(part.name().empty() || (CheckPayloadName(part.name()).ok() && part.name().find('/') == std::string::npos));
      }
      Require(request.chunk_bytes() == 0 || CheckChunkBytes(request.chunk_bytes()).ok());
      break;
    }
    case 5: {
      v1::DescribePartRequest request;
      if (!Parse(&request, data, size) || !CheckDescribePartRequest(request).ok()) return 0;
      Require(!request.path().empty() && (request.chunk_bytes() == 0 || CheckChunkBytes(request.chunk_bytes()).ok()));
      break;
    }
    case 6: {
      v1::PlanBroadcastRequest request;
      if (!Parse(&request, data, size) || !CheckPlanBroadcastRequest(request).ok()) return 0;
      // The planner is handed the size and chunk as they are: a bounded number of chunks.
      const uint64_t chunk =
          request.broadcast().chunk_bytes() > 0 ? request.broadcast().chunk_bytes() : kLargestDefaultChunkBytes;
      Require(CheckChunkBytes(chunk).ok() && request.size_bytes() / chunk <= kMaxPlanChunks);
      break;
    }
    case 7: {
      v1::PatchRequest request;
      if (!Parse(&request, data, size) || !CheckPatchRequest(request).ok()) return 0;
      // The control tree decodes each patch against its plan and applies them in this order.
      Require(request.patches_size() >= 1 && request.patches_size() <= kMaxPatchesPerRequest);
      for (int i = 0; i < request.patches_size(); ++i) Require(request.patches(i).version() == uint32_t(i) + 1);
      break;
    }
    default:
      break;
  }
  return 0;
}
