// TorrentExports: how standard BitTorrent clients (aria2c, transmission) reach the complete
// payloads this daemon holds.
//
// Export() makes the .torrent (v1, one file named after the payload's last path component)
// and the magnet link of a payload under the data directory. Serve() seeds it to a client that
// waits at ip:port: the daemon dials the client, because there is no tracker and clients such
// as aria2c ignore a magnet link's x.pe peer hint. A serve lasts until the client announces
// every piece, its timeout passes, Stop() is called or its caller gives up; at most kMaxServes
// run at once, so a flood of requests cannot tie up the daemon's upload and disk.
//
// Piece sizes are powers of two from 16 KiB to 64 MiB; 0 picks SwarmPlanner's default.
// The same payload and piece size give the same info hash, so a .torrent exported once
// matches every later serve of the payload. Thread-safe; Export and Serve block the caller.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/ids.h"
#include "include/gridcast/result.h"
#include "daemon/pull/torrent_session.h"
#include "proto/control.pb.h"

namespace gridcast {

struct ExportedTorrent {
  std::string torrent;  // bencoded
  std::string magnet;
  uint64_t piece_bytes = 0;
  uint64_t size_bytes = 0;
};

struct ServeRequest {
  std::string name;      // payload name below the data directory
  std::string address;   // the waiting client, "ip:port"
  uint64_t piece_bytes = 0;
  double timeout_s = 0;  // 0 = 120 s plus 1 s per MB of payload
};

struct ServeSnapshot {
  ServeId id{};
  std::string name;
  std::string address;
  v1::ServeState state = v1::SERVE_STATE_HASHING;
  ServeProgress progress;
  double elapsed_s = 0;
  double transfer_s = 0;  // since the first dial (elapsed_s also counts hashing the payload)
};

class TorrentExports {
 public:
  static constexpr size_t kMaxServes = 4;

  // `session` outlives this object.
  TorrentExports(std::string data_dir, TorrentSession& session);

  Result<ExportedTorrent> Export(const std::string& name, uint64_t piece_bytes) const;

  // Serves until the end (see the header comment) and returns the last snapshot: OK when the
  // client has every piece, DeadlineExceeded after the timeout, Cancelled after Stop() or when
  // `abandoned()` (polled) turns true, ResourceExhausted when kMaxServes already run.
  Result<ServeSnapshot> Serve(const ServeRequest& request, const std::function<bool()>& abandoned);

  // Ends a running serve. NotFound when no serve has that id.
  Status Stop(const ServeId& id);

  // The serves running now.
  std::vector<ServeSnapshot> Serves() const;

 private:
  struct Running {
    ServeSnapshot snapshot;
    std::chrono::steady_clock::time_point started;
    bool stop = false;
  };

  struct Opened {
    std::shared_ptr<PayloadStore> store;
    std::string torrent;
  };

  // Opens the complete payload `name` (hashing it) and makes its .torrent.
  Result<Opened> Open(const std::string& name, uint64_t piece_bytes) const;
  Result<ServeSnapshot> Run(Running& running, const ServeRequest& request, const std::function<bool()>& abandoned);
  // Waits for the serve to end and returns how it ended; updates the snapshot meanwhile.
  Status Follow(Running& running, ClientServe& serve, std::chrono::steady_clock::time_point dialled,
                std::chrono::steady_clock::time_point deadline,
                const std::function<bool()>& abandoned);

  const std::string data_dir_;
  TorrentSession& session_;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  std::map<ServeId, std::shared_ptr<Running>> serves_;  // guarded by mutex_, with their contents
};

}  // namespace gridcast
