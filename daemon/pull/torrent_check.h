// A plan's .torrent is untrusted input (it comes with a Prepare): parsed here, and checked to
// describe the payload the plan names (BitTorrent v1, one file of the payload's size, one piece
// per chunk) before a swarm is built on it.
#pragma once

#include <libtorrent/torrent_info.hpp>

#include <cstdint>
#include <memory>
#include <string_view>

#include "include/gridcast/result.h"

namespace gridcast {

Result<std::shared_ptr<lt::torrent_info>> ParsePlanTorrent(std::string_view torrent, uint64_t size_bytes,
                                                           uint64_t chunk_bytes);

}  // namespace gridcast
