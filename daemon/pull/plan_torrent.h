// The .torrents of gridcast's swarms.
//
// A pull or hybrid plan's swarm runs on a placeholder torrent that every member builds from
// the plan alone (PlanTorrent): its piece "hashes" name the plan and the piece, they describe no
// bytes. libtorrent asks gridcast's disk I/O whether a piece is good (StoreDiskIo::async_hash),
// and gridcast checks the piece against the chunk's digest from the source; the torrent's hash
// is only what async_hash then reports. So no SHA-1 pass over the payload precedes a pull, and
// no .torrent travels in Prepare. The info hash still differs per plan, so two swarms of the
// same payload never meet. An exported .torrent (torrent_exports.h) is a real one: outside
// clients check its SHA-1s.
#pragma once

#include <libtorrent/torrent_info.hpp>

#include <cstdint>
#include <memory>
#include <string_view>

#include "common/ids.h"
#include "include/gridcast/result.h"

namespace gridcast {

// The placeholder torrent of plan `id`'s swarm: one file, `size_bytes` in pieces of
// `chunk_bytes` (one per chunk). Piece p's hash is the plan id followed by p, big-endian.
// InvalidArgument for an empty payload, a piece size BitTorrent cannot carry, or more than
// kMaxSwarmPieces pieces.
Result<std::shared_ptr<lt::torrent_info>> PlanTorrent(const PlanId& id, uint64_t size_bytes, uint64_t chunk_bytes);

// A bencoded .torrent, parsed and checked to describe `size_bytes` in pieces of `chunk_bytes`
// (BitTorrent v1, one file, one piece per chunk).
Result<std::shared_ptr<lt::torrent_info>> ParsePayloadTorrent(std::string_view torrent, uint64_t size_bytes,
                                                              uint64_t chunk_bytes);

}  // namespace gridcast
