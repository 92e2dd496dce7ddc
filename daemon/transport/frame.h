// Data-plane wire format: fixed-size frame headers and the connection handshake.
//
// Every frame on a data connection starts with a 72-byte header (big-endian integers):
//   magic "GCF2" | type u8 | digest u8 | 2 zero bytes | plan id (16) | lane u32 | length u32 |
//   chunk u64 | hash (32)
// DATA frames (parent -> child) carry the chunk's digest: `digest` says which (ChunkDigest,
// the plan's), the first DigestBytes(digest) bytes of `hash` hold it and the rest are zero;
// `length` payload bytes follow. ACK and NACK frames (child -> parent) have length 0, digest
// 0 and no hash; a KEEPALIVE (parent -> child, length 0) says the
// parent is alive while it waits for a chunk to forward, so its child can tell waiting from a
// hung parent; its chunk field is kKeepaliveParentRepairs when the parent (hybrid plans) pulls
// that lane's missing chunks from the swarm, else 0. An ASSIGN (parent -> child, length 0; plans
// whose lanes share chunks) says `chunk` belongs to `lane` and the child holds it already (its
// bitmap said so): the child passes it on in that lane as if it had just arrived. A DIGESTS
// frame (parent -> child; digest 0, no hash) carries `length` bytes (at most
// MaxEncodedDigestBatchBytes) of one signed batch of chunk digests (common/digest_batches.h,
// EncodeDigestBatch), its `chunk` the batch's first chunk: a connection carries a chunk's batch
// before any frame about that chunk. A HELD frame (child -> parent; digest 0, no hash) comes
// from a child that finds held chunks later (its Accept said so: it looks in its earlier
// attempt's ".part" or an earlier copy once their digests arrive), one per batch of digests
// the child has looked through: `chunk` is the batch's first chunk and `length` bytes (1 to
// kMaxHeldBytes) of bits follow, one per chunk of the batch (chunk `chunk` + i at bit i % 8
// of byte i / 8), set for those it holds. The parent sends such a child no chunk of a batch
// before its HELD frame, and none whose bit is set. Decoding checks everything a header alone can tell; the
// receiver checks the rest against its plan (lane, chunk range, chunk size, the batch's
// signature).
//
// Handshake (the secret never travels): the child speaks first with a random challenge, the
// parent answers with its identity and an HMAC over that challenge plus its own challenge,
// the child accepts with an HMAC over the parent's challenge and the runs of chunks it holds
// verified (at most kMaxAcceptHeldRuns, from its first chunk: of chunks past the last run it says
// nothing, and takes them again if they come).
//
// Version 2 of the data protocol (kProtocolVersion, in the challenge) chose the chunk digest
// per plan (the frame header's digest byte); version 1 knew SHA-256 only ("GCF1"). Version 3
// added ASSIGN frames, version 4 DIGESTS frames, version 5 the digest tree (connections on lane
// kDigestTreeLane), version 6 HELD frames, version 7 runs of held chunks in
// the Accept instead of a bitmap of every chunk. Members of different versions refuse each other at the challenge, naming
// both versions.
//
// The digest tree (plans with a swarm; daemon/executor/digest_tree.h): a parent's connection to
// its child in the tree says lane kDigestTreeLane in its hello and frames, and carries DIGESTS
// and KEEPALIVE frames only, every batch of the plan in order; the child answers one ACK (its
// `chunk` the last batch's first chunk) once it holds every batch, however they reached it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/chunk_digest.h"
#include "common/chunk_run.h"
#include "common/digest_batches.h"
#include "common/crypto.h"
#include "common/ids.h"
#include "include/gridcast/result.h"

namespace gridcast {

// Values are on the wire; do not renumber.
enum class FrameType : uint8_t {
  kData = 1,
  kAck = 2,
  kNack = 3,
  kKeepalive = 4,
  kAssign = 5,
  kDigests = 6,
  kHeld = 7,
};
// A HELD frame's bits: a batch's (kMaxChunksPerBatch chunks).
inline constexpr uint32_t kMaxHeldBytes = kMaxChunksPerBatch / 8;

inline constexpr size_t kFrameHeaderBytes = 72;
// The lane number of the digest tree's connections: no plan has that many lanes.
inline constexpr uint32_t kDigestTreeLane = 0xFFFF'FFFF;
inline constexpr uint64_t kKeepaliveParentRepairs = 1;

struct FrameHeader {
  FrameType type = FrameType::kData;
  ChunkDigest digest = ChunkDigest::kSha256;  // DATA frames: what `hash` is
  PlanId plan_id{};
  uint32_t lane = 0;
  uint32_t length = 0;
  uint64_t chunk = 0;
  Digest hash{};  // DATA frames: the chunk's digest
};

std::array<uint8_t, kFrameHeaderBytes> EncodeFrameHeader(const FrameHeader& header);

// InvalidArgument for a bad magic, an unknown type or digest, a DATA length above max_length,
// a hash with bytes past its digest's width, a DIGESTS frame empty, longer than any batch or
// with a hash, a HELD frame empty, longer than kMaxHeldBytes or with a hash, or an
// ACK/NACK/KEEPALIVE/ASSIGN with a payload or hash.
Result<FrameHeader> DecodeFrameHeader(std::span<const uint8_t, kFrameHeaderBytes> bytes,
                                      uint32_t max_length);

// --- Handshake ---------------------------------------------------------------------------

inline constexpr size_t kChallengeBytes = 40;   // "GCH1" | version u32 | nonce (32)
inline constexpr size_t kHelloBytes = 100;      // see Hello
inline constexpr size_t kAcceptHeaderBytes = 44;  // "GCH3" | status u32 | mac (32) | extra u32
inline constexpr uint32_t kProtocolVersion = 7;
// Held chunks in an Accept: runs [begin, end) of 16 bytes each, so a message of at most 1 MiB
// at any plan size.
inline constexpr uint32_t kMaxAcceptHeldRuns = 1u << 16;
inline constexpr uint32_t kHeldRunBytes = 16;
// The runs and a byte of flags, or an error message.
inline constexpr uint32_t kMaxAcceptExtraBytes = kMaxAcceptHeldRuns * kHeldRunBytes + 1;

struct Challenge {
  uint32_t version = kProtocolVersion;
  std::array<uint8_t, 32> nonce{};
};

struct Hello {
  PlanId plan_id{};
  uint32_t lane = 0;
  uint32_t parent = 0;        // member index of the sender
  uint32_t stream = 0;        // which of the edge's parallel streams this is
  uint32_t stream_count = 1;
  std::array<uint8_t, 32> nonce{};  // the parent's challenge to the child
  Digest mac{};               // ParentMac(...)
};

// Status 0 = accepted: `extra` is the child's held runs (EncodeHeldRuns) and one byte of flags
// (1: the child finds held chunks later, LaneReceiver::FindsHeldChunksLater). Otherwise `extra`
// is an error message.
struct Accept {
  uint32_t status = 0;
  Digest mac{};
  std::vector<uint8_t> extra;
};

std::array<uint8_t, kChallengeBytes> EncodeChallenge(const Challenge& c);
Result<Challenge> DecodeChallenge(std::span<const uint8_t, kChallengeBytes> bytes);
std::array<uint8_t, kHelloBytes> EncodeHello(const Hello& h);
Result<Hello> DecodeHello(std::span<const uint8_t, kHelloBytes> bytes);
std::vector<uint8_t> EncodeAccept(const Accept& a);

// Each run as begin and end, u64 little-endian. REQUIRES: at most kMaxAcceptHeldRuns.
std::vector<uint8_t> EncodeHeldRuns(std::span<const ChunkRun> runs);
// InvalidArgument unless `bytes` is whole runs, each non-empty, increasing, apart (not
// touching) and within `num_chunks`.
Result<std::vector<ChunkRun>> DecodeHeldRuns(std::span<const uint8_t> bytes, uint64_t num_chunks);
// Decodes the fixed part; `extra_length` receives the length of what follows.
Result<Accept> DecodeAcceptHeader(std::span<const uint8_t, kAcceptHeaderBytes> bytes,
                                  uint32_t* extra_length);

// What the parent proves: it knows the secret and answers this child's challenge.
Digest ParentMac(const std::string& secret, const std::array<uint8_t, 32>& child_nonce,
                 const Hello& hello);
// What the child proves back: it knows the secret and answers the parent's challenge.
Digest ChildMac(const std::string& secret, const Hello& hello);

}  // namespace gridcast
