#include "daemon/pull/plan_torrent.h"

#include <libtorrent/bencode.hpp>
#include <libtorrent/create_torrent.hpp>

#include <algorithm>
#include <iterator>
#include <string>

#include "collectives/validate_plan.h"
#include "common/big_endian.h"
#include "common/units.h"

namespace gridcast {

Result<std::shared_ptr<lt::torrent_info>> PlanTorrent(const PlanId& id, uint64_t size_bytes, uint64_t chunk_bytes) {
  if (size_bytes == 0) return Status::InvalidArgument("BitTorrent cannot carry an empty payload");
  GRIDCAST_RETURN_IF_ERROR(CheckPieceBytes(chunk_bytes));
  const uint64_t pieces = CeilDiv(size_bytes, chunk_bytes);
  if (pieces > kMaxSwarmPieces) {
    return Status::InvalidArgument("a swarm carries at most " + std::to_string(kMaxSwarmPieces) + " pieces, not " +
                                   std::to_string(pieces));
  }
  lt::file_storage files;
  files.add_file("gridcast-" + ToHex(id), static_cast<std::int64_t>(size_bytes));
  lt::create_torrent maker(files, static_cast<int>(chunk_bytes), lt::create_torrent::v1_only);
  maker.set_creator("gridcast");
  static_assert(PlanId::kBytes + 4 == lt::sha1_hash::size());
  lt::sha1_hash placeholder;
  std::copy(id.bytes().begin(), id.bytes().end(), placeholder.begin());
  for (uint64_t p = 0; p < pieces; ++p) {
    StoreBigEndian(reinterpret_cast<uint8_t*>(placeholder.data()) + PlanId::kBytes, p, 4);
    maker.set_hash(lt::piece_index_t(static_cast<int>(p)), placeholder);
  }
  std::string bencoded;
  lt::bencode(std::back_inserter(bencoded), maker.generate());
  return ParsePayloadTorrent(bencoded, size_bytes, chunk_bytes);
}

Result<std::shared_ptr<lt::torrent_info>> ParsePayloadTorrent(std::string_view torrent, uint64_t size_bytes,
                                                              uint64_t chunk_bytes) {
  lt::error_code ec;
  auto info = std::make_shared<lt::torrent_info>(
      lt::span<char const>(torrent.data(), static_cast<std::ptrdiff_t>(torrent.size())), ec, lt::from_span);
  if (ec) return Status::InvalidArgument("the torrent does not parse: " + ec.message());
  const uint64_t chunks = CeilDiv(size_bytes, chunk_bytes);
  if (!info->info_hashes().has_v1() || info->num_files() != 1 || static_cast<uint64_t>(info->total_size()) != size_bytes ||
      static_cast<uint64_t>(info->piece_length()) != chunk_bytes || static_cast<uint64_t>(info->num_pieces()) != chunks) {
    return Status::InvalidArgument("the torrent does not describe the payload (one file of " +
                                   std::to_string(size_bytes) + " bytes in pieces of " + std::to_string(chunk_bytes) +
                                   ")");
  }
  return info;
}

}  // namespace gridcast
