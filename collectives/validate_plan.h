// ValidatePlan: proves a Plan can be executed as written.
//
// Checks: members are non-empty, named and unique; every chunk of the payload belongs to
// exactly one lane; every lane's fanouts form an arborescence over all members rooted at the
// lane's source (each other member has exactly one parent, all are reachable, no member is
// named twice in a child list); every index names a member; stream counts are >= 1.
// Together these mean every member receives every chunk exactly once.
// Pull and hybrid plans also carry a swarm: every member but the source listed once, peers and
// stripes naming members and chunks, and every member connected to the source through peers.
// A pull plan has no lanes. Pure; thread-safe.
#pragma once

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "include/gridcast/status.h"

namespace gridcast {

// The chunk rules, written once. A chunk is at most 64 MiB: a receiver holds a window of them
// in memory per connection. A pull or hybrid plan's chunk is a BitTorrent piece: a power of
// two of at least 16 KiB (libtorrent's block).
inline constexpr uint64_t kMaxChunkBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMinPieceBytes = uint64_t{16} << 10;
// Parallel TCP connections on one edge: more only divides a link further.
inline constexpr int kMaxStreamsPerEdge = 64;
// A lane's planned rate (Lane::planned_bps) is at most a petabit per second.
inline constexpr double kMaxPlannedBps = 1e15;
// Chunks in one plan: a member keeps bits per chunk (verified; one per outgoing edge), 128 MiB
// each at 2^30, and nothing larger (lane logs are computed from the ranges, digests stream,
// docs/streamed-digests.md). A swarm's pieces stay fewer: libtorrent keeps state per piece,
// and loads a torrent of at most 2^21. Lanes that share chunks log them as they come, 10 bytes
// a chunk, so a plan of shared lanes has at most kMaxSharedLaneChunks.
inline constexpr uint64_t kMaxPlanChunks = uint64_t{1} << 30;
inline constexpr uint64_t kMaxSwarmPieces = uint64_t{1} << 21;
inline constexpr uint64_t kMaxSharedLaneChunks = uint64_t{1} << 24;
// InvalidArgument unless 1 <= chunk_bytes <= kMaxChunkBytes.
Status CheckChunkBytes(uint64_t chunk_bytes);
// InvalidArgument unless `piece_bytes` is a power of two from kMinPieceBytes to kMaxChunkBytes.
Status CheckPieceBytes(uint64_t piece_bytes);

// The smallest chunk, a power of two, that cuts `payload_bytes` into at most kMaxPlanChunks
// chunks (kMaxSwarmPieces pieces of at least kMinPieceBytes with `swarm`). Beyond
// kMaxChunkBytes for payloads no plan can carry (over 1 PiB; 128 TiB with a swarm).
uint64_t SmallestChunkBytes(uint64_t payload_bytes, bool swarm);
// InvalidArgument unless `payload_bytes` in chunks of `chunk_bytes` makes at most
// kMaxPlanChunks chunks (kMaxSwarmPieces with `swarm`), naming the smallest chunk that fits,
// or that the payload is too large for any.
Status CheckChunkCount(uint64_t payload_bytes, uint64_t chunk_bytes, bool swarm);

// OK, or InvalidArgument naming the lane, member or chunk at fault.
Status ValidatePlan(const Plan& plan);

// What one member can check of a plan it holds only part of (a slice, proto/plan_slice.h:
// members it was not told of have empty names): every rule of ValidatePlan that what it holds
// can show (indices, stream counts, no member with two fanouts or two parents, swarm entries,
// every chunk in exactly one lane, named members unique) and, for `member` itself, that it is
// each lane's source or has a parent there and is in the swarm, with its parents, children,
// peers and the sources named. That every lane reaches every member is for the plan's maker
// to check (ValidatePlan, at the source). Works on whole plans too.
Status ValidatePlanPart(const Plan& plan, int member);

// ValidatePlan plus: every member names a node of `model`.
Status ValidatePlanOn(const Plan& plan, const NetworkModel& model);

}  // namespace gridcast
