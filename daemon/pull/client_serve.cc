#include "daemon/pull/client_serve.h"

#include <libtorrent/peer_connection_handle.hpp>
#include <libtorrent/peer_request.hpp>

#include <atomic>
#include <vector>

namespace gridcast {

// What the one outside client of a ServeTo() announced and asked for, and its redialling.
// Network thread, except the atomics.
class ClientTracker {
 public:
  ClientTracker(const PayloadIdentity& payload, lt::tcp::endpoint client)
      : have_(payload.NumChunks(), false),
        requested_((payload.size_bytes + lt::default_block_size - 1) / lt::default_block_size, false),
        blocks_per_piece_(payload.chunk_bytes / lt::default_block_size), client_(client) {}

  bool IsClient(const lt::peer_connection_handle& peer) const {
    return peer.remote().address() == client_.address();
  }
  void Have(int piece) {
    if (piece < 0 || static_cast<size_t>(piece) >= have_.size() || have_[piece]) return;
    have_[piece] = true;
    ++pieces_;
  }
  void HaveAll() {
    for (size_t p = 0; p < have_.size(); ++p) Have(static_cast<int>(p));
  }
  // Marks the 16 KiB blocks the request covers whole (clients ask for aligned blocks).
  void Requested(const lt::peer_request& r) {
    if (r.piece < lt::piece_index_t(0) || r.start < 0 || r.length <= 0) return;
    const uint64_t first = static_cast<uint64_t>(static_cast<int>(r.piece)) * blocks_per_piece_ +
                           static_cast<uint64_t>(r.start) / lt::default_block_size;
    const uint64_t blocks = static_cast<uint64_t>(r.length + lt::default_block_size - 1) / lt::default_block_size;
    for (uint64_t b = first; b < first + blocks && b < requested_.size(); ++b) {
      if (!requested_[b]) ++blocks_requested_;
      requested_[b] = true;
    }
  }
  void Connected(int delta) { connections_ += delta; }
  void Interested(int delta) { interested_ += delta; }

  // Once a second. A client that was not listening yet, or dropped the connection before it
  // had everything, is dialled again.
  void Tick(const lt::torrent_handle& handle) {
    if (connections_ > 0 || pieces_ == have_.size()) return;
    if (++idle_ticks_ < kRedialTicks) return;
    idle_ticks_ = 0;
    handle.connect_peer(client_);
  }

  void Fill(ServeProgress& progress) const {
    progress.pieces_total = have_.size();
    progress.client_pieces = pieces_;
    progress.requested_all = blocks_requested_ == requested_.size();
    progress.interested = interested_ > 0;
    progress.connected = connections_ > 0;
  }

 private:
  static constexpr int kRedialTicks = 2;

  std::vector<bool> have_;
  std::vector<bool> requested_;
  const uint64_t blocks_per_piece_;
  const lt::tcp::endpoint client_;
  std::atomic<uint64_t> pieces_{0};
  std::atomic<uint64_t> blocks_requested_{0};
  std::atomic<int> connections_{0};
  std::atomic<int> interested_{0};
  int idle_ticks_ = 0;
};


namespace {

// One connection to the client (there may be more than one over a serve).
class ClientPeerPlugin final : public lt::peer_plugin {
 public:
  explicit ClientPeerPlugin(std::shared_ptr<ClientTracker> tracker) : tracker_(std::move(tracker)) {}
  ~ClientPeerPlugin() override { Disconnected(); }

  void on_connected() override {
    if (!connected_) tracker_->Connected(+1);
    connected_ = true;
  }
  void on_disconnect(lt::error_code const&) override { Disconnected(); }
  bool on_interested() override {
    SetInterested(true);
    return false;
  }
  bool on_not_interested() override {
    SetInterested(false);
    return false;
  }
  bool on_request(lt::peer_request const& request) override {
    tracker_->Requested(request);
    return false;
  }
  bool on_have(lt::piece_index_t piece) override {
    tracker_->Have(static_cast<int>(piece));
    return false;
  }
  bool on_bitfield(lt::bitfield const& pieces) override {
    for (int p = 0; p < pieces.size(); ++p) {
      if (pieces.get_bit(p)) tracker_->Have(p);
    }
    return false;
  }
  bool on_have_all() override {
    tracker_->HaveAll();
    return false;
  }

 private:
  void SetInterested(bool interested) {
    if (interested != interested_) tracker_->Interested(interested ? +1 : -1);
    interested_ = interested;
  }
  void Disconnected() {
    SetInterested(false);
    if (connected_) tracker_->Connected(-1);
    connected_ = false;
  }

  const std::shared_ptr<ClientTracker> tracker_;
  bool connected_ = false;
  bool interested_ = false;
};

class ClientTorrentPlugin final : public lt::torrent_plugin {
 public:
  ClientTorrentPlugin(lt::torrent_handle handle, std::shared_ptr<ClientTracker> tracker)
      : handle_(std::move(handle)), tracker_(std::move(tracker)) {}
  std::shared_ptr<lt::peer_plugin> new_connection(lt::peer_connection_handle const& peer) override {
    if (!tracker_->IsClient(peer)) return nullptr;
    return std::make_shared<ClientPeerPlugin>(tracker_);
  }
  void tick() override { tracker_->Tick(handle_); }

 private:
  const lt::torrent_handle handle_;
  const std::shared_ptr<ClientTracker> tracker_;
};

class ServedClient final : public ClientServe {
 public:
  ServedClient(std::shared_ptr<PullSwarm> swarm, std::shared_ptr<ClientTracker> tracker, uint64_t payload_bytes)
      : swarm_(std::move(swarm)), tracker_(std::move(tracker)), payload_bytes_(payload_bytes) {}
  ~ServedClient() override { Stop(); }

  ServeProgress Progress() const override {
    ServeProgress progress;
    tracker_->Fill(progress);
    progress.payload_bytes = payload_bytes_;
    progress.uploaded_bytes = swarm_->Report().uploaded_bytes;
    return progress;
  }
  void Stop() override { swarm_->Leave(); }

 private:
  const std::shared_ptr<PullSwarm> swarm_;
  const std::shared_ptr<ClientTracker> tracker_;
  const uint64_t payload_bytes_;
};

}  // namespace

std::shared_ptr<ClientTracker> MakeClientTracker(const PayloadIdentity& payload, lt::tcp::endpoint client) {
  return std::make_shared<ClientTracker>(payload, client);
}

TorrentPluginFactory ClientPlugin(std::shared_ptr<ClientTracker> tracker) {
  return [tracker = std::move(tracker)](lt::torrent_handle const& handle, lt::client_data_t) {
    return std::make_shared<ClientTorrentPlugin>(handle, tracker);
  };
}

std::shared_ptr<ClientServe> MakeServedClient(std::shared_ptr<PullSwarm> swarm, std::shared_ptr<ClientTracker> tracker,
                                              uint64_t payload_bytes) {
  return std::make_shared<ServedClient>(std::move(swarm), std::move(tracker), payload_bytes);
}

}  // namespace gridcast
