#include "daemon/pull/store_disk_io.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <libtorrent/aux_/vector.hpp>
#include <libtorrent/error_code.hpp>
#include <libtorrent/peer_request.hpp>
#include <libtorrent/storage_defs.hpp>

#include "common/hex.h"
#include "daemon/pull/piece_assembly.h"
#include "daemon/pull/recent_pieces.h"

namespace gridcast {

std::string InfoHashHex(const lt::sha1_hash& info_hash) {
  return ToHex({reinterpret_cast<const uint8_t*>(info_hash.data()), info_hash.size()});
}

void TorrentStorageTable::Register(const lt::sha1_hash& info_hash, std::shared_ptr<TorrentStorage> storage) {
  std::lock_guard<std::mutex> lock(mutex_);
  storages_[info_hash] = std::move(storage);
}

void TorrentStorageTable::Unregister(const lt::sha1_hash& info_hash) {
  std::lock_guard<std::mutex> lock(mutex_);
  storages_.erase(info_hash);
}

std::shared_ptr<TorrentStorage> TorrentStorageTable::Find(const lt::sha1_hash& info_hash) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = storages_.find(info_hash);
  return it == storages_.end() ? nullptr : it->second;
}

namespace {

lt::storage_error StorageError(lt::operation_t operation) {
  lt::storage_error error;
  error.ec = boost::system::error_code(EIO, boost::system::generic_category());
  error.operation = operation;
  return error;
}

// Memory for pieces gathered, being checked or recent (PieceAssembly, RecentPieces), per
// daemon: at 256 KiB pieces 128 recent ones (a few seconds of a 10 Gbit/s swarm) and at least
// as many in flight, well above what one swarm keeps partial at once.
constexpr uint64_t kAssemblyBudget = 64 << 20;
constexpr uint64_t kRecentBudget = kAssemblyBudget / 2;

std::span<const uint8_t> Bytes(const char* data, int length) {
  return {reinterpret_cast<const uint8_t*>(data), static_cast<size_t>(length)};
}

class StoreDiskIo final : public lt::disk_interface, public lt::buffer_allocator_interface {
 public:
  StoreDiskIo(lt::io_context& io, std::shared_ptr<TorrentStorageTable> table)
      : io_(io), table_(std::move(table)) {}

  lt::storage_holder new_torrent(lt::storage_params const& params, std::shared_ptr<void> const&) override {
    std::shared_ptr<TorrentStorage> storage = table_->Find(params.info_hash);
    if (storage == nullptr) {
      // Only torrents gridcast registered are ever added; anything else gets no bytes.
      spdlog::error("swarm: torrent {} has no registered store", InfoHashHex(params.info_hash));
    }
    lt::storage_index_t index{0};
    if (free_.empty()) {
      index = storages_.end_index();
      storages_.push_back(std::move(storage));
    } else {
      index = free_.back();
      free_.pop_back();
      storages_[index] = std::move(storage);
    }
    return lt::storage_holder(index, *this);
  }

  void remove_torrent(lt::storage_index_t index) override {
    storages_[index].reset();
    assembly_.DropStorage(static_cast<int>(index));
    recent_.DropStorage(static_cast<int>(index));
    free_.push_back(index);
  }

  void async_read(lt::storage_index_t index, lt::peer_request const& r,
                  std::function<void(lt::disk_buffer_holder, lt::storage_error const&)> handler,
                  lt::disk_job_flags_t) override {
    const std::shared_ptr<TorrentStorage>& storage = storages_[index];
    const auto chunk = static_cast<uint64_t>(static_cast<int>(r.piece));
    if (const uint8_t* lent = recent_.Lend({static_cast<int>(index), chunk}, static_cast<uint64_t>(r.start),
                                           static_cast<uint64_t>(r.length))) {
      // libtorrent only sends from read buffers; free_disk_buffer() returns this one.
      char* block = const_cast<char*>(reinterpret_cast<const char*>(lent));
      boost::asio::post(io_, [this, handler = std::move(handler), block, length = r.length] {
        handler(lt::disk_buffer_holder(*this, block, length), lt::storage_error());
      });
      return;
    }
    if (storage != nullptr && storage->store->capabilities().streamed != nullptr && chunk < storage->piece_sha1.size() &&
        !storage->store->Has(chunk)) {
      return ReadOnceSealed(index, storage, r, std::move(handler));
    }
    Read(index, r, std::move(handler));
  }

  bool async_write(lt::storage_index_t index, lt::peer_request const& r, char const* buf,
                   std::shared_ptr<lt::disk_observer>, std::function<void(lt::storage_error const&)> handler,
                   lt::disk_job_flags_t) override {
    const std::shared_ptr<TorrentStorage>& storage = storages_[index];
    const auto chunk = static_cast<uint64_t>(static_cast<int>(r.piece));
    Status written = Status::Ok();
    if (storage == nullptr) {
      written = Status::FailedPrecondition("no store");
    } else if (!Gather(index, *storage, chunk, r, buf)) {
      written = storage->store->WriteBlock(chunk, static_cast<uint64_t>(r.start), Bytes(buf, r.length));
    }
    lt::storage_error error;
    if (!written.ok()) {
      spdlog::warn("swarm: write to piece {}: {}", static_cast<int>(r.piece), written.ToString());
      error = StorageError(lt::operation_t::file_write);
    }
    boost::asio::post(io_, [handler = std::move(handler), error] { handler(error); });
    return false;  // writes are not queued, so the queue is never full
  }

  void async_hash(lt::storage_index_t index, lt::piece_index_t piece, lt::span<lt::sha256_hash>,
                  lt::disk_job_flags_t,
                  std::function<void(lt::piece_index_t, lt::sha1_hash const&, lt::storage_error const&)> handler) override {
    auto job = std::make_shared<HashJob>();
    job->index = index;
    job->storage = storages_[index];
    job->piece = piece;
    job->chunk = static_cast<uint64_t>(static_cast<int>(piece));
    job->gathered = assembly_.Take({static_cast<int>(index), job->chunk});
    job->handler = std::move(handler);
    job->give_up = std::chrono::steady_clock::now() + kDigestWait;
    boost::asio::post(pool_, [this, job] { Hash(job); });
  }

  void async_hash2(lt::storage_index_t, lt::piece_index_t piece, int, lt::disk_job_flags_t,
                   std::function<void(lt::piece_index_t, lt::sha256_hash const&, lt::storage_error const&)> handler) override {
    // gridcast torrents are BitTorrent v1 only: there are no v2 block hashes to compute.
    boost::asio::post(io_, [handler = std::move(handler), piece] {
      handler(piece, lt::sha256_hash(), StorageError(lt::operation_t::file_read));
    });
  }

  void async_move_storage(lt::storage_index_t, std::string path, lt::move_flags_t,
                          std::function<void(lt::status_t, std::string const&, lt::storage_error const&)> handler) override {
    boost::asio::post(io_, [handler = std::move(handler), path] {
      handler(lt::status_t::fatal_disk_error, path, StorageError(lt::operation_t::file_rename));
    });
  }

  void async_release_files(lt::storage_index_t, std::function<void()> handler) override { Done(std::move(handler)); }

  void async_check_files(lt::storage_index_t, lt::add_torrent_params const*, lt::aux::vector<std::string, lt::file_index_t>,
                         std::function<void(lt::status_t, lt::storage_error const&)> handler) override {
    // The store re-verified its chunks when it opened; the torrent's have_pieces say which.
    boost::asio::post(io_, [handler = std::move(handler)] { handler(lt::status_t::no_error, lt::storage_error()); });
  }

  void async_stop_torrent(lt::storage_index_t, std::function<void()> handler) override { Done(std::move(handler)); }

  void async_rename_file(lt::storage_index_t, lt::file_index_t file, std::string name,
                         std::function<void(std::string const&, lt::file_index_t, lt::storage_error const&)> handler) override {
    boost::asio::post(io_, [handler = std::move(handler), name, file] {
      handler(name, file, StorageError(lt::operation_t::file_rename));
    });
  }

  void async_delete_files(lt::storage_index_t, lt::remove_flags_t,
                          std::function<void(lt::storage_error const&)> handler) override {
    // Payloads are never deleted through BitTorrent.
    boost::asio::post(io_, [handler = std::move(handler)] { handler(StorageError(lt::operation_t::file_remove)); });
  }

  void async_set_file_priority(lt::storage_index_t, lt::aux::vector<lt::download_priority_t, lt::file_index_t> priorities,
                               std::function<void(lt::storage_error const&,
                                                  lt::aux::vector<lt::download_priority_t, lt::file_index_t>)> handler) override {
    boost::asio::post(io_, [handler = std::move(handler), priorities = std::move(priorities)]() mutable {
      handler(lt::storage_error(), std::move(priorities));
    });
  }

  void async_clear_piece(lt::storage_index_t index, lt::piece_index_t piece,
                         std::function<void(lt::piece_index_t)> handler) override {
    assembly_.Drop({static_cast<int>(index), static_cast<uint64_t>(static_cast<int>(piece))});
    boost::asio::post(io_, [handler = std::move(handler), piece] { handler(piece); });
  }

  void update_stats_counters(lt::counters&) const override {}
  std::vector<lt::open_file_state> get_status(lt::storage_index_t) const override { return {}; }
  void abort(bool) override {
    *alive_ = false;  // on io_, as the retries' timers: none posts a check from now on
    pool_.join();
  }
  void submit_jobs() override {}
  void settings_updated() override {}

  void free_disk_buffer(char* buffer) override {
    if (!recent_.Return(reinterpret_cast<const uint8_t*>(buffer))) delete[] buffer;
  }

 private:
  void Read(lt::storage_index_t index, lt::peer_request const& r,
            std::function<void(lt::disk_buffer_holder, lt::storage_error const&)> handler) {
    const std::shared_ptr<TorrentStorage>& storage = storages_[index];
    if (storage != nullptr && storage->on_first_upload) std::exchange(storage->on_first_upload, nullptr)();
    char* buffer = new char[static_cast<size_t>(r.length)];
    Status read = storage == nullptr
                      ? Status::FailedPrecondition("no store")
                      : storage->store->ReadBlock(static_cast<uint64_t>(static_cast<int>(r.piece)),
                                                  static_cast<uint64_t>(r.start),
                                                  {reinterpret_cast<uint8_t*>(buffer), static_cast<size_t>(r.length)});
    lt::storage_error error;
    if (!read.ok()) {
      spdlog::warn("swarm: read of piece {}: {}", static_cast<int>(r.piece), read.ToString());
      error = StorageError(lt::operation_t::file_read);
    }
    boost::asio::post(io_, [this, handler = std::move(handler), buffer, length = r.length, error] {
      handler(lt::disk_buffer_holder(*this, buffer, length), error);
    });
  }

  // A source that seals its payload as it sends it (StreamedSource) is a seed from the start,
  // and a peer may ask for a chunk it has not sealed yet: the read waits for the seal (the
  // digest tree asks for every batch, so the sealing runs ahead on its own), checked every
  // kSealRetry, for as long as the torrent is the one at `index`. A read error instead would
  // pause the source's torrent.
  void ReadOnceSealed(lt::storage_index_t index, std::shared_ptr<TorrentStorage> storage, lt::peer_request r,
                      std::function<void(lt::disk_buffer_holder, lt::storage_error const&)> handler) {
    if (storages_[index] != storage) {
      return handler(lt::disk_buffer_holder(), StorageError(lt::operation_t::file_read));
    }
    if (storage->store->Has(static_cast<uint64_t>(static_cast<int>(r.piece)))) return Read(index, r, std::move(handler));
    auto timer = std::make_shared<boost::asio::steady_timer>(io_, kSealRetry);
    timer->async_wait([this, index, storage = std::move(storage), r, handler = std::move(handler), timer,
                       alive = alive_](const boost::system::error_code&) mutable {
      if (*alive) ReadOnceSealed(index, std::move(storage), r, std::move(handler));
    });
  }
  static constexpr auto kSealRetry = std::chrono::milliseconds(5);

  // Gathers the block in memory unless the chunk is held already (a hybrid member's pushed
  // chunks reach libtorrent as pieces to "write") or over the assembly's budget.
  bool Gather(lt::storage_index_t index, const TorrentStorage& storage, uint64_t chunk, lt::peer_request const& r,
              char const* buf) {
    const PayloadIdentity& identity = storage.store->identity();
    if (chunk >= identity.NumChunks() || r.start < 0 || r.length < 0 ||
        static_cast<uint64_t>(r.start) + static_cast<uint64_t>(r.length) > identity.ChunkSize(chunk) ||
        storage.store->Has(chunk)) {
      return false;  // the store refuses what is outside the chunk, and ignores held chunks
    }
    return assembly_.Add({static_cast<int>(index), chunk}, identity.ChunkSize(chunk), static_cast<uint64_t>(r.start),
                         Bytes(buf, r.length));
  }

  void Done(std::function<void()> handler) {
    if (handler) boost::asio::post(io_, std::move(handler));
  }

  struct HashJob {
    lt::storage_index_t index;
    std::shared_ptr<TorrentStorage> storage;
    lt::piece_index_t piece;
    uint64_t chunk = 0;
    std::shared_ptr<const std::vector<uint8_t>> gathered;
    std::function<void(lt::piece_index_t, lt::sha1_hash const&, lt::storage_error const&)> handler;
    std::chrono::steady_clock::time_point give_up;
  };
  // A piece may come before the batch holding its digest, which travels the digest tree: it is
  // checked again every kDigestRetry until kDigestWait has passed, then failed (libtorrent
  // fetches it again). Nothing is marked without its digest.
  static constexpr auto kDigestWait = std::chrono::seconds(10);
  static constexpr auto kDigestRetry = std::chrono::milliseconds(10);

  // On pool_: checks the piece against its digest and answers libtorrent on io_.
  void Hash(const std::shared_ptr<HashJob>& job) {
    lt::sha1_hash reported;  // all zero: never a real piece hash, so libtorrent fails it
    lt::storage_error error;
    const std::shared_ptr<TorrentStorage>& storage = job->storage;
    if (storage == nullptr || job->chunk >= storage->piece_sha1.size()) {
      error = StorageError(lt::operation_t::file_read);
    } else {
      // A gathered piece is checked in memory and written only if good; other pieces were
      // written block by block and are checked as stored.
      bool newly = false;
      Status verified = job->gathered != nullptr ? storage->store->WriteChunk(job->chunk, *job->gathered, &newly)
                                                 : storage->store->VerifyStoredChunk(job->chunk, &newly);
      if (verified.code() == StatusCode::kUnavailable && std::chrono::steady_clock::now() < job->give_up) {
        auto timer = std::make_shared<boost::asio::steady_timer>(io_, kDigestRetry);
        timer->async_wait([this, job, timer, alive = alive_](const boost::system::error_code&) {
          if (*alive) boost::asio::post(pool_, [this, job] { Hash(job); });
        });
        return;
      }
      if (verified.ok()) {
        reported = storage->piece_sha1[job->chunk];
        storage->on_chunk_verified(newly);
      } else if (verified.code() != StatusCode::kDataLoss) {
        error = StorageError(lt::operation_t::file_read);
        spdlog::warn("swarm: checking piece {}: {}", job->chunk, verified.ToString());
      }
    }
    const bool recent = job->gathered != nullptr && !reported.is_all_zeros();
    boost::asio::post(io_, [this, job, recent, reported, error] {
      // Recent before libtorrent announces the piece (peers ask for it next), and only while
      // the torrent is still the one at `index`: a removed torrent's index is reused.
      if (recent && storages_[job->index] == job->storage) {
        recent_.Add({static_cast<int>(job->index), job->chunk}, job->gathered);
      }
      job->handler(job->piece, reported, error);
    });
  }

  lt::io_context& io_;
  const std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  const std::shared_ptr<TorrentStorageTable> table_;
  lt::aux::vector<std::shared_ptr<TorrentStorage>, lt::storage_index_t> storages_;
  std::vector<lt::storage_index_t> free_;
  PieceAssembly assembly_{kAssemblyBudget};
  RecentPieces recent_{kRecentBudget};
  // Piece checks hash (and write, or read) a whole chunk: off the network thread.
  boost::asio::thread_pool pool_{2};
};

}  // namespace

std::unique_ptr<lt::disk_interface> MakeStoreDiskIo(lt::io_context& io,
                                                   std::shared_ptr<TorrentStorageTable> table) {
  return std::make_unique<StoreDiskIo>(io, std::move(table));
}

}  // namespace gridcast
