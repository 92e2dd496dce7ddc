#include "daemon/pull/torrent_check.h"
#include "common/units.h"

#include <string>

namespace gridcast {

Result<std::shared_ptr<lt::torrent_info>> ParsePlanTorrent(std::string_view torrent, uint64_t size_bytes,
                                                           uint64_t chunk_bytes) {
  lt::error_code ec;
  auto info = std::make_shared<lt::torrent_info>(
      lt::span<char const>(torrent.data(), static_cast<std::ptrdiff_t>(torrent.size())), ec, lt::from_span);
  if (ec) return Status::InvalidArgument("the plan's torrent does not parse: " + ec.message());
  const uint64_t chunks = CeilDiv(size_bytes, chunk_bytes);
  if (!info->info_hashes().has_v1() || info->num_files() != 1 || static_cast<uint64_t>(info->total_size()) != size_bytes ||
      static_cast<uint64_t>(info->piece_length()) != chunk_bytes || static_cast<uint64_t>(info->num_pieces()) != chunks) {
    return Status::InvalidArgument("the plan's torrent does not describe the payload (one file of " +
                                   std::to_string(size_bytes) + " bytes in pieces of " + std::to_string(chunk_bytes) +
                                   ")");
  }
  return info;
}

}  // namespace gridcast
