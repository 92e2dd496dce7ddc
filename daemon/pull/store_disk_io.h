// StoreDiskIo: libtorrent's disk subsystem replaced by gridcast's verified PayloadStore.
//
// Why: chunks written by BitTorrent and by the push path must go through one store with one
// rule — nothing counts until its SHA-256 matches the plan. libtorrent's blocks are gathered
// in memory per piece (PieceAssembly); when libtorrent asks for a piece's hash, the piece is
// checked against the plan's SHA-256 and written once if it matches (PayloadStore::WriteChunk).
// Pieces over the assembly's memory budget take the older way: their blocks land in the
// chunk's bytes of the .part file (never in a verified chunk) and the stored chunk is checked.
// Either way libtorrent is told the torrent's own SHA-1 for that piece on success (or a wrong
// one on failure, so it re-requests the piece and blames the peer). The torrent's SHA-1s are
// never computed at receivers. Payload bytes are read and written only through PayloadStore.
//
// libtorrent calls every method on its network thread; the piece checks run on a small pool
// and their handlers are posted back. Internal to daemon/pull.
#pragma once

#include <libtorrent/disk_buffer_holder.hpp>
#include <libtorrent/disk_interface.hpp>
#include <libtorrent/io_context.hpp>
#include <libtorrent/sha1_hash.hpp>

#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "daemon/store/payload_store.h"

namespace gridcast {

// What the disk subsystem needs to know about one torrent, registered before it is added.
struct TorrentStorage {
  std::shared_ptr<PayloadStore> store;
  std::vector<lt::sha1_hash> piece_sha1;  // the torrent's, reported for verified pieces
  // A piece passed its check; `newly`: the swarm brought it (false: the store held it already,
  // e.g. from the push path of a hybrid plan).
  std::function<void(bool newly)> on_chunk_verified;
  // Called once, on the network thread, before the first block is read for a peer.
  std::function<void()> on_first_upload;
};

// Thread-safe table from info-hash to storage, shared by the session and its disk subsystem.
class TorrentStorageTable {
 public:
  void Register(const lt::sha1_hash& info_hash, std::shared_ptr<TorrentStorage> storage);
  void Unregister(const lt::sha1_hash& info_hash);
  std::shared_ptr<TorrentStorage> Find(const lt::sha1_hash& info_hash) const;

 private:
  mutable std::mutex mutex_;
  std::map<lt::sha1_hash, std::shared_ptr<TorrentStorage>> storages_;
};

std::string InfoHashHex(const lt::sha1_hash& info_hash);

std::unique_ptr<lt::disk_interface> MakeStoreDiskIo(lt::io_context& io,
                                                   std::shared_ptr<TorrentStorageTable> table);

}  // namespace gridcast
