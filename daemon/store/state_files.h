// The two files a store keeps about a payload under <data_dir>/.gridcast/state/ (named by
// PayloadStatePath), their formats and nothing else:
//
//   <key>.state   the resume bitmap of a payload being received:
//                 "GCSTATE1" | the identity's Fingerprint (32 bytes) | one bit per chunk
//                 (chunk c at bit c % 8 of byte c / 8), set once the chunk's stored bytes
//                 hashed right. A bitmap for another identity is ignored.
//   <key>.chunks  the chunk list of a finished payload, for Scrub and RecordedIdentity:
//                 "GCCHUNK2" | size u64 | chunk size u64 (big-endian) | whole-payload SHA-256 |
//                 the chunk digest (ChunkDigest, 1 byte) | one chunk digest per chunk
//                 (DigestBytes wide). Version 1 ("GCCHUNK1", written before chunk digests were
//                 chosen) has no digest byte and SHA-256 chunk digests; it is still read.
//
// Every call goes through the FileIo it is given, so fault tests see these files too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/chunk_bits.h"
#include "common/crypto.h"
#include "common/file_io.h"
#include "daemon/store/payload_identity.h"
#include "include/gridcast/result.h"

namespace gridcast {

// Where a payload of `data_dir` keeps its resume bitmap ("<key>.state") and, once finished,
// its chunk list ("<key>.chunks"): <data_dir>/.gridcast/state/<key>.
std::string PayloadStatePath(const std::string& data_dir, const std::string& name, const char* suffix);

// ORs the bitmap recorded in the state file `fd` for the identity with `fingerprint` into `into`
// (one bit per chunk of it), a window at a time; false when the file holds another identity's,
// or nothing readable (`into` may then hold part of it).
bool ReadResumeBitmap(FileIo& io, int fd, const Digest& fingerprint, ChunkBits& into);
// Replaces the state file's contents with an empty bitmap of `chunks` chunks for the identity
// with `fingerprint`.
Status ResetResumeState(FileIo& io, int fd, const Digest& fingerprint, uint64_t chunks);
// Where in the state file the byte holding `chunk`'s bit lies.
uint64_t ResumeBitmapByteOffset(uint64_t chunk);

// The chunk list recorded at `path`; NotFound when there is none, DataLoss when it is damaged.
// `name` names the payload in errors. 32 bytes a chunk in memory: ReadChunkListHeader and
// ReadChunkListDigests read a window of it.
Result<PayloadIdentity> ReadChunkList(FileIo& io, const std::string& path, const std::string& name);
// Its header (sizes, digest kind, SHA-256; no digests), once the file is seen to hold one digest
// per chunk.
Result<PayloadIdentity> ReadChunkListHeader(FileIo& io, const std::string& path, const std::string& name);
// Digests [first, first + count) of it (cut at its last chunk).
Result<std::vector<Digest>> ReadChunkListDigests(FileIo& io, const std::string& path, const std::string& name,
                                                 uint64_t first, uint64_t count);
// Records `identity`'s chunk list at `path` all at once (a temporary file beside it, renamed
// over it); with `sync`, on the disk before the rename.
Status WriteChunkList(FileIo& io, const std::string& path, const PayloadIdentity& identity, bool sync);
// The same with `header`'s sizes, digest kind and SHA-256, and digests that come in `pieces`
// parts, in order, from `digests_of(piece)`: the list is never whole in memory.
Status WriteChunkList(FileIo& io, const std::string& path, const PayloadIdentity& header, uint64_t pieces,
                      const std::function<Result<std::vector<Digest>>(uint64_t piece)>& digests_of, bool sync);

}  // namespace gridcast
