#include "daemon/pull/member_plugins.h"

#include <spdlog/spdlog.h>

#include <boost/asio/error.hpp>
#include <map>

namespace gridcast {

void StripeGate::Tick() {
  if (fallback_ || last_progress_ == Clock::time_point{}) return;
  if (Clock::now() - last_progress_ < stall_timeout_) return;
  bool missing = false;
  for (size_t p = 0; p < held_.size() && !missing; ++p) {
    missing = !held_[p] && (kind_ == Kind::kPull || wanted_[p]);
  }
  if (!missing) return;
  spdlog::warn("swarm: no progress for {} ms; fetching the missing chunks from anyone",
               std::chrono::duration_cast<std::chrono::milliseconds>(stall_timeout_).count());
  fallback_ = true;
  for (size_t p = 0; p < wanted_.size() && kind_ == Kind::kPull; ++p) {
    if (!held_[p] && !wanted_[p] && !in_stripe_[p]) {
      wanted_[p] = true;
      Prioritize(static_cast<int>(p), lt::low_priority);
    }
  }
  // A new connection to the source is believed in full.
  for (auto& peer : source_connections_) {
    if (peer.native_handle()) peer.disconnect(boost::asio::error::connection_aborted, lt::operation_t::bittorrent);
  }
  source_connections_.clear();
  handle_.connect_peer(source_);
}

void StripeGate::Prioritize(int piece, lt::download_priority_t priority) {
  if (static_cast<uint64_t>(piece) >= looked_through_) {
    deferred_[piece] = std::max(deferred_[piece], priority);
    return;
  }
  handle_.piece_priority(lt::piece_index_t(piece), priority);
}

void StripeGate::LookedThrough(uint64_t end) {
  end = std::min<uint64_t>(end, held_.size());
  std::vector<std::pair<lt::piece_index_t, lt::download_priority_t>> priorities;
  for (uint64_t p = looked_through_; p < end; ++p) {
    if (deferred_[p] != lt::dont_download && !held_[p]) {
      priorities.emplace_back(lt::piece_index_t(static_cast<int>(p)), deferred_[p]);
    }
  }
  looked_through_ = std::max(looked_through_, end);
  if (!priorities.empty()) handle_.prioritize_pieces(priorities);
}

namespace {

class GatePeerPlugin final : public lt::peer_plugin {
 public:
  GatePeerPlugin(lt::peer_connection_handle peer, std::shared_ptr<StripeGate> gate)
      : peer_(std::move(peer)), gate_(std::move(gate)), from_source_(gate_->IsSource(peer_)) {}

  // What a limited peer announces beyond what this member takes from it ends here (true:
  // libtorrent never hears it). A whole bitfield or have-all from it ends here too: libtorrent
  // takes a piece set whole or not at all. A peer limited here limits this member too (the
  // plan states a limit at both ends), so it does the same with this member's bitfield, and
  // each side announces its pieces again in HAVEs once the connection is up (tick). The peer
  // id is known once the handshake is done, before any of these messages.
  bool on_have(lt::piece_index_t piece) override {
    const int p = static_cast<int>(piece);
    if (p < 0 || p >= gate_->pieces()) return false;  // libtorrent refuses it and drops the peer
    if (const std::vector<bool>* limit = gate_->LimitOf(peer_.pid())) {
      if (static_cast<size_t>(p) >= limit->size() || !(*limit)[p]) return true;
    }
    if (from_source_) {
      gate_->Dealt(static_cast<int>(piece));
    } else {
      gate_->Open(static_cast<int>(piece));
    }
    return false;
  }
  bool on_bitfield(lt::bitfield const& pieces) override {
    if (gate_->LimitOf(peer_.pid()) != nullptr) return true;
    if (from_source_) return !gate_->TrustSource();
    for (int p = 0; p < pieces.size(); ++p) {
      if (pieces.get_bit(p)) gate_->Open(p);
    }
    return false;
  }
  bool on_have_all() override {
    if (gate_->LimitOf(peer_.pid()) != nullptr) return true;
    if (from_source_) return !gate_->TrustSource();
    gate_->OpenAll();
    return false;
  }
  bool on_piece(lt::peer_request const&, lt::span<char const>) override {
    gate_->OnBlock();
    return false;
  }
  // Once a second; the first after the handshake, with a limited peer, announces again what
  // this member held when it sent its bitfield (the peer kept that from its libtorrent: above).
  // Later pieces go out as HAVEs as usual.
  void tick() override {
    if (announced_again_ || peer_.pid().is_all_zeros() || gate_->LimitOf(peer_.pid()) == nullptr) return;
    announced_again_ = true;
    SendHaves(peer_, gate_->HeldPieces());
  }

 private:
  const lt::peer_connection_handle peer_;
  const std::shared_ptr<StripeGate> gate_;
  const bool from_source_;
  bool announced_again_ = false;
};

class GateTorrentPlugin final : public lt::torrent_plugin {
 public:
  explicit GateTorrentPlugin(std::shared_ptr<StripeGate> gate) : gate_(std::move(gate)) {}
  std::shared_ptr<lt::peer_plugin> new_connection(lt::peer_connection_handle const& peer) override {
    gate_->OnConnection(peer);
    return std::make_shared<GatePeerPlugin>(peer, gate_);
  }
  void on_piece_pass(lt::piece_index_t piece) override { gate_->OnPiecePassed(static_cast<int>(piece)); }
  void tick() override { gate_->Tick(); }

 private:
  const std::shared_ptr<StripeGate> gate_;
};

// Which held pieces every peer of a pull member (but the source) holds too (network thread
// only). From then on no peer asks this member for them, so their pages may leave the page
// cache: a swarm then recycles a window of page cache as the push path does, instead of
// taking fresh pages for the whole payload (docs/performance.md: fresh pages made the writes
// the largest cost of a pull on a fast network).
class SharedPieces {
 public:
  SharedPieces(std::set<lt::peer_id> peers, std::vector<bool> held, std::function<void(uint64_t)> on_shared)
      : peers_(std::move(peers)), held_(std::move(held)), holders_(held_.size(), 0),
        on_shared_(std::move(on_shared)) {}

  void Announced(const lt::peer_id& peer, int piece) {
    if (piece < 0 || static_cast<size_t>(piece) >= held_.size() || peers_.count(peer) == 0) return;
    std::vector<bool>& announced = announced_[peer];
    if (announced.empty()) announced.resize(held_.size(), false);
    if (announced[piece]) return;  // a peer that reconnects announces its pieces again
    announced[piece] = true;
    ++holders_[piece];
    Check(piece);
  }
  void Held(int piece) {
    if (piece < 0 || static_cast<size_t>(piece) >= held_.size()) return;
    held_[piece] = true;
    Check(piece);
  }

 private:
  void Check(int piece) {
    if (held_[piece] && holders_[piece] == peers_.size()) on_shared_(static_cast<uint64_t>(piece));
  }

  const std::set<lt::peer_id> peers_;
  std::vector<bool> held_;
  std::vector<size_t> holders_;  // peers that announced each piece
  std::map<lt::peer_id, std::vector<bool>> announced_;
  const std::function<void(uint64_t)> on_shared_;
};

class SharedPeerPlugin final : public lt::peer_plugin {
 public:
  SharedPeerPlugin(lt::peer_connection_handle peer, std::shared_ptr<SharedPieces> shared)
      : peer_(std::move(peer)), shared_(std::move(shared)) {}

  // The peer id is known once the handshake is done, before any of these messages.
  bool on_have(lt::piece_index_t piece) override {
    shared_->Announced(peer_.pid(), static_cast<int>(piece));
    return false;
  }
  bool on_bitfield(lt::bitfield const& pieces) override {
    for (int p = 0; p < pieces.size(); ++p) {
      if (pieces.get_bit(p)) shared_->Announced(peer_.pid(), p);
    }
    return false;
  }

 private:
  const lt::peer_connection_handle peer_;
  const std::shared_ptr<SharedPieces> shared_;
};

class SharedTorrentPlugin final : public lt::torrent_plugin {
 public:
  explicit SharedTorrentPlugin(std::shared_ptr<SharedPieces> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<lt::peer_plugin> new_connection(lt::peer_connection_handle const& peer) override {
    return std::make_shared<SharedPeerPlugin>(peer, shared_);
  }
  void on_piece_pass(lt::piece_index_t piece) override { shared_->Held(static_cast<int>(piece)); }

 private:
  const std::shared_ptr<SharedPieces> shared_;
};

}  // namespace

TorrentPluginFactory GatePlugin(std::shared_ptr<StripeGate> gate) {
  return [gate = std::move(gate)](lt::torrent_handle const& handle, lt::client_data_t) {
    gate->Arm(handle);
    return std::make_shared<GateTorrentPlugin>(gate);
  };
}

TorrentPluginFactory SharedPiecesPlugin(std::set<lt::peer_id> peers, std::vector<bool> held,
                                        std::function<void(uint64_t)> on_shared) {
  auto shared = std::make_shared<SharedPieces>(std::move(peers), std::move(held), std::move(on_shared));
  return [shared](lt::torrent_handle const&, lt::client_data_t) { return std::make_shared<SharedTorrentPlugin>(shared); };
}

}  // namespace gridcast
