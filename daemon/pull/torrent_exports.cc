#include "daemon/pull/torrent_exports.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>

#include "collectives/planners/swarm.h"
#include "collectives/validate_plan.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "proto/states.h"

namespace gridcast {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kMaxTimeoutS = 7 * 86400;
constexpr auto kPollInterval = std::chrono::milliseconds(100);

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

TorrentExports::TorrentExports(std::string data_dir, TorrentSession& session)
    : data_dir_(std::move(data_dir)), session_(session) {}

Result<TorrentExports::Opened> TorrentExports::Open(const std::string& name, uint64_t piece_bytes) const {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  if (piece_bytes != 0) GRIDCAST_RETURN_IF_ERROR(CheckPieceBytes(piece_bytes));
  auto piece_for_size = [piece_bytes](uint64_t size_bytes) {
    return piece_bytes != 0 ? piece_bytes : SwarmPlanner().DefaultChunkBytes(size_bytes);
  };
  Opened opened;
  GRIDCAST_ASSIGN_OR_RETURN(opened.store, PayloadStore::OpenHeld(data_dir_, name, piece_for_size));
  GRIDCAST_ASSIGN_OR_RETURN(opened.torrent, TorrentSession::MakeTorrent(
                                                *opened.store, std::filesystem::path(name).filename().string()));
  return opened;
}

Result<ExportedTorrent> TorrentExports::Export(const std::string& name, uint64_t piece_bytes) const {
  GRIDCAST_ASSIGN_OR_RETURN(Opened opened, Open(name, piece_bytes));
  ExportedTorrent exported;
  GRIDCAST_ASSIGN_OR_RETURN(exported.magnet, TorrentSession::MagnetLink(opened.torrent));
  exported.torrent = std::move(opened.torrent);
  exported.piece_bytes = opened.store->identity().chunk_bytes;
  exported.size_bytes = opened.store->identity().size_bytes;
  return exported;
}

Result<ServeSnapshot> TorrentExports::Serve(const ServeRequest& request, const std::function<bool()>& abandoned) {
  // Everything cheap to check is checked before a slot is taken or the payload read.
  GRIDCAST_RETURN_IF_ERROR(TorrentSession::CheckPeerAddress(request.address));
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(request.name));
  if (request.piece_bytes != 0) GRIDCAST_RETURN_IF_ERROR(CheckPieceBytes(request.piece_bytes));
  if (!(request.timeout_s >= 0 && request.timeout_s <= kMaxTimeoutS)) {
    return Status::InvalidArgument("serve timeout must be from 0 (automatic) to 7 days");
  }
  auto running = std::make_shared<Running>();
  running->snapshot.id = ServeId::Random();
  running->snapshot.name = request.name;
  running->snapshot.address = request.address;
  running->snapshot.state = v1::SERVE_STATE_HASHING;
  running->started = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (serves_.size() >= kMaxServes) {
      return Status::ResourceExhausted("this daemon already serves " + std::to_string(kMaxServes) +
                                       " clients; wait for one to finish or cancel one");
    }
    serves_.emplace(running->snapshot.id, running);
  }
  Result<ServeSnapshot> result = Run(*running, request, abandoned);
  std::lock_guard<std::mutex> lock(mutex_);
  serves_.erase(running->snapshot.id);
  return result;
}

Result<ServeSnapshot> TorrentExports::Run(Running& running, const ServeRequest& request,
                                          const std::function<bool()>& abandoned) {
  GRIDCAST_ASSIGN_OR_RETURN(Opened opened, Open(request.name, request.piece_bytes));
  const double timeout_s = request.timeout_s > 0
                               ? request.timeout_s
                               : 120.0 + static_cast<double>(opened.store->identity().size_bytes) / 1e6;
  const Clock::time_point deadline =
      running.started + std::chrono::milliseconds(static_cast<int64_t>(std::ceil(timeout_s * 1000)));
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<ClientServe> serve,
                            session_.ServeTo(opened.torrent, opened.store, request.address));
  spdlog::info("serving {} to the BitTorrent client at {} ({} pieces)", request.name, request.address,
               opened.store->identity().NumChunks());
  Status ended = Follow(running, *serve, Clock::now(), deadline, abandoned);
  serve->Stop();
  std::lock_guard<std::mutex> lock(mutex_);
  spdlog::info("serve of {} to {}: {} after {:.1f} s, {} bytes uploaded", request.name, request.address,
               ServeStateText(running.snapshot.state), running.snapshot.elapsed_s, running.snapshot.progress.uploaded_bytes);
  if (!ended.ok()) return ended;
  return running.snapshot;
}

Status TorrentExports::Follow(Running& running, ClientServe& serve, Clock::time_point dialled,
                              Clock::time_point deadline, const std::function<bool()>& abandoned) {
  std::unique_lock<std::mutex> lock(mutex_);
  ServeSnapshot& snapshot = running.snapshot;
  while (true) {
    lock.unlock();
    const ServeProgress progress = serve.Progress();
    const bool gone = abandoned();
    lock.lock();
    snapshot.progress = progress;
    snapshot.elapsed_s = SecondsSince(running.started);
    snapshot.transfer_s = SecondsSince(dialled);
    const std::string pieces = std::to_string(progress.client_pieces) + " of " +
                               std::to_string(progress.pieces_total) + " pieces";
    if (progress.Complete()) {
      snapshot.state = v1::SERVE_STATE_DONE;
      return Status::Ok();
    }
    if (running.stop || gone) {
      snapshot.state = v1::SERVE_STATE_CANCELLED;
      return Status::Cancelled("serve of " + snapshot.name + " to " + snapshot.address + " cancelled" +
                               (gone ? " (the caller went away)" : "") + "; the client had " + pieces);
    }
    if (Clock::now() >= deadline) {
      snapshot.state = v1::SERVE_STATE_TIMED_OUT;
      return Status::DeadlineExceeded("the client at " + snapshot.address + " had " + pieces + " of " +
                                      snapshot.name + " when the serve timed out" +
                                      (progress.uploaded_bytes == 0 ? " (was it listening?)" : ""));
    }
    snapshot.state = progress.connected ? v1::SERVE_STATE_SERVING : v1::SERVE_STATE_DIALLING;
    stopped_.wait_for(lock, kPollInterval, [&running] { return running.stop; });
  }
}

Status TorrentExports::Stop(const ServeId& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = serves_.find(id);
  if (it == serves_.end()) return Status::NotFound("no serve " + ToHex(id));
  it->second->stop = true;
  stopped_.notify_all();
  return Status::Ok();
}

std::vector<ServeSnapshot> TorrentExports::Serves() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ServeSnapshot> all;
  for (const auto& [id, running] : serves_) {
    all.push_back(running->snapshot);
    all.back().elapsed_s = SecondsSince(running->started);
  }
  return all;
}

}  // namespace gridcast
