// The checks of a control request that need nothing but the message: sizes, ids, names,
// numbers, enums. Handlers run them before anything else; what needs the daemon's state (does
// the plan exist, the file, the member) comes after. Pure, so fuzz_control runs them on
// arbitrary bytes (docs/reliability.md). Prepare's plan has its own (collectives/validate_plan.h);
// Remove, ExportTorrent and ServeTo are checked by what serves them (Holdings::Remove,
// TorrentExports), and a probe's size by WriteProbePayload.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/crypto.h"
#include "common/ids.h"
#include "include/gridcast/result.h"
#include "proto/control.pb.h"

namespace gridcast {

// Durations in requests and daemon settings: from 0 to a year (a finite number of seconds).
inline constexpr double kMaxRequestSeconds = 365.0 * 24 * 3600;
// How long ago a Start may say its broadcast began at the source.
inline constexpr double kMaxSourceStartedAgoS = 30.0 * 24 * 3600;
// Requests name at most this many members (a broadcast to more goes to all: members empty).
inline constexpr int kMaxRequestMembers = 1'000'000;
inline constexpr size_t kMaxTopologyYamlBytes = size_t{1} << 20;
inline constexpr size_t kMaxRequestPathBytes = 4096;  // PATH_MAX
// A filled payload (BroadcastRequest.fill) that declares every chunk's digest does so in one
// request: at most this many (32 MiB of digests, within the 64 MiB of a control message). One
// that declares only its size has up to kMaxPlanChunks, as PlanBroadcast plans (of the
// request's chunk size, or of the planners' largest default, 4 MiB).
inline constexpr uint64_t kMaxFilledChunks = uint64_t{1} << 20;
inline constexpr uint64_t kLargestDefaultChunkBytes = uint64_t{4} << 20;
// A Patch carries every patch of its plan so far: at most this many (a plan is patched once
// per failure or straggler it sees).
inline constexpr int kMaxPatchesPerRequest = 1024;
// A longer cancel reason (a failure naming many members) is cut to this.
inline constexpr size_t kMaxCancelReasonBytes = 512;
// An origin's URL, each of its headers, how many headers, and its CA certificates (PEM).
inline constexpr size_t kMaxOriginUrlBytes = 8192;
inline constexpr size_t kMaxOriginHeaderBytes = 8192;
inline constexpr int kMaxOriginHeaders = 64;
inline constexpr size_t kMaxOriginCaBytes = size_t{1} << 20;

// InvalidArgument naming `field` unless 0 <= seconds <= at_most (NaN is refused).
Status CheckSeconds(std::string_view field, double seconds, double at_most = kMaxRequestSeconds);

Status CheckBroadcastRequest(const v1::BroadcastRequest& request);
// A fill whose sender declares the payload's size (and perhaps its SHA-256) but not its
// chunks' digests: the source hashes it as it is sent (PayloadStore::OpenStreamedFilling).
inline bool DeclaresOnlyTheSize(const v1::PayloadFill& fill) {
  return fill.chunk_hashes().empty() && fill.size_bytes() > 0;
}
// The whole payload's SHA-256 a request declares (PayloadFill.sha256, OriginSource.sha256),
// if it declares one; InvalidArgument when it is not 32 bytes.
Result<std::optional<Digest>> DeclaredSha256(const std::string& sha256);
// An origin's URL (http or https, no control characters), headers ("Name: value", one line
// each; their text is never put in an error), CA certificates and SHA-256, within bounds.
Status CheckOriginSource(const v1::OriginSource& origin);
// What planning needs of a request (its payload aside): a PlanBroadcast's.
Status CheckBroadcastOptions(const v1::BroadcastRequest& request);
Status CheckPlanBroadcastRequest(const v1::PlanBroadcastRequest& request);
// Part names are single path components; members and duplicates are the coordinator's to check.
Status CheckAllgatherRequest(const v1::AllgatherRequest& request);
Status CheckDescribePartRequest(const v1::DescribePartRequest& request);
// Returns the plan id.
Result<PlanId> CheckStartRequest(const v1::StartRequest& request);
Result<PlanId> CheckCancelRequest(const v1::CancelRequest& request);
// The plan's id, once the patches are versions 1..n in order (n at most kMaxPatchesPerRequest);
// what each patch names is checked against the plan (PatchFromProto) where the plan is known.
Result<PlanId> CheckPatchRequest(const v1::PatchRequest& request);
// The reason to record and relay: "cancelled" when none, else at most kMaxCancelReasonBytes,
// cut at a character boundary (relayed in a proto string, whose parser rejects broken UTF-8).
std::string CancelReason(const v1::CancelRequest& request);
Status CheckStatusRequest(const v1::StatusRequest& request);

}  // namespace gridcast
