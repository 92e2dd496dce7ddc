#include "daemon/pull/torrent_session.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/alert_types.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/create_torrent.hpp>
#include <libtorrent/extensions.hpp>
#include <libtorrent/hasher.hpp>
#include <libtorrent/magnet_uri.hpp>
#include <libtorrent/peer_connection_handle.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/session_params.hpp>
#include <libtorrent/torrent_handle.hpp>
#include <libtorrent/torrent_info.hpp>
#include <libtorrent/torrent_status.hpp>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "daemon/auth/hmac.h"
#include "daemon/membership/cluster_file.h"
#include "daemon/pull/piece_dealer.h"
#include "daemon/pull/store_disk_io.h"

namespace gridcast {

std::string PeerIdForMember(const std::string& member_name) {
  // A client prefix in the usual "-XXnnnn-" style, then 12 hex digits of the name's SHA-256.
  return "-GC0100-" + ToHex(Sha256(AsBytes(member_name))).substr(0, 12);
}

namespace {

using Clock = std::chrono::steady_clock;

// How much a pull member may have dealt to it by the source and not yet completed: enough to
// keep its requests to the source flowing (about a second at its share of the source's
// upload), small enough that the last deals drain quickly.
constexpr uint64_t kDealtBytes = 1 << 20;
// How often the alert thread collects alerts (the queue holds more than a batch: Start()).
constexpr std::chrono::milliseconds kAlertBatch{100};
using TorrentPluginFactory =
    std::function<std::shared_ptr<lt::torrent_plugin>(lt::torrent_handle const&, lt::client_data_t)>;

Result<lt::tcp::endpoint> Endpoint(const std::string& address) {
  GRIDCAST_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(address));
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(host_port.first, ec);
  if (ec) return Status::InvalidArgument("BitTorrent address '" + address + "' is not ip:port");
  return lt::tcp::endpoint(ip, host_port.second);
}

// The striped member's side (network thread only). libtorrent asks any peer that holds a
// wanted piece for it, and the source holds everything: left alone, members ask the source for
// pieces their peers could give them, and the source sends many pieces several times. So the
// member ignores the source's have-all and believes only the HAVEs the source sends (pull:
// the pieces DealingSource deals it; hybrid: its stripe, and stripes it took over:
// StripeDispenser). A pull member wants its stripe from the start, a piece the source deals
// it at once, and any other piece once somebody announces it; a hybrid member wants only what Want()
// asks (what its push lanes will not deliver), its stripe first. If no block arrives for the
// stall timeout while wanted pieces are missing (a peer died with pieces nobody else
// announces), it reconnects to the source and believes its have-all this time; a pull member
// then wants every missing piece.
class StripeGate {
 public:
  enum class Kind { kPull, kHybrid };
  StripeGate(Kind kind, std::vector<bool> in_stripe, std::vector<bool> held, lt::tcp::endpoint source,
             Clock::duration stall_timeout)
      : kind_(kind), in_stripe_(std::move(in_stripe)), wanted_(held.size(), false), held_(std::move(held)),
        source_(source), stall_timeout_(stall_timeout) {}

  void Arm(lt::torrent_handle handle) { handle_ = std::move(handle); }
  bool IsSource(const lt::peer_connection_handle& peer) const { return peer.remote() == source_; }
  bool TrustSource() const { return fallback_; }

  // Somebody holds `piece`: a pull member may fetch it now.
  void Open(int piece) {
    if (kind_ != Kind::kPull) return;
    if (piece < 0 || static_cast<size_t>(piece) >= wanted_.size()) return;
    if (wanted_[piece] || held_[piece] || in_stripe_[piece]) return;
    wanted_[piece] = true;
    handle_.piece_priority(lt::piece_index_t(piece), lt::low_priority);
  }
  // The source announced `piece` to this member: the member is to take it from the source
  // (its stripe, or a piece dealt to it from another's stripe), ahead of what peers offer.
  void Dealt(int piece) {
    if (kind_ != Kind::kPull) return Open(piece);
    if (piece < 0 || static_cast<size_t>(piece) >= wanted_.size()) return;
    if (held_[piece] || in_stripe_[piece]) return;
    wanted_[piece] = true;
    handle_.piece_priority(lt::piece_index_t(piece), lt::top_priority);
  }
  void OpenAll() {
    for (size_t p = 0; p < wanted_.size(); ++p) Open(static_cast<int>(p));
  }

  // Hybrid: the push lanes will not deliver `pieces`.
  void Want(const std::vector<uint64_t>& pieces) {
    std::vector<std::pair<lt::piece_index_t, lt::download_priority_t>> priorities;
    for (uint64_t p : pieces) {
      if (p >= wanted_.size() || held_[p] || wanted_[p]) continue;
      wanted_[p] = true;
      priorities.emplace_back(lt::piece_index_t(static_cast<int>(p)), in_stripe_[p] ? lt::top_priority : lt::low_priority);
    }
    if (priorities.empty()) return;
    if (last_progress_ == Clock::time_point{}) last_progress_ = Clock::now();
    handle_.prioritize_pieces(priorities);
  }

  void OnConnection(const lt::peer_connection_handle& peer) {
    if (IsSource(peer)) source_connections_.push_back(peer);
  }

  void OnPiecePassed(int piece) {
    last_progress_ = Clock::now();
    if (piece >= 0 && static_cast<size_t>(piece) < held_.size()) held_[piece] = true;
  }
  // A block arrived: in a busy swarm many pieces are in flight at once and each completes late,
  // so progress is counted in blocks, not pieces.
  void OnBlock() { last_progress_ = Clock::now(); }

  void Tick() {
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
        handle_.piece_priority(lt::piece_index_t(static_cast<int>(p)), lt::low_priority);
      }
    }
    // A new connection to the source is believed in full.
    for (auto& peer : source_connections_) {
      if (peer.native_handle()) peer.disconnect(boost::asio::error::connection_aborted, lt::operation_t::bittorrent);
    }
    source_connections_.clear();
    handle_.connect_peer(source_);
  }

  void Started() {
    if (kind_ == Kind::kPull) last_progress_ = Clock::now();
  }

 private:
  const Kind kind_;
  const std::vector<bool> in_stripe_;
  std::vector<bool> wanted_;
  std::vector<bool> held_;
  const lt::tcp::endpoint source_;
  const Clock::duration stall_timeout_;
  lt::torrent_handle handle_;
  bool fallback_ = false;
  Clock::time_point last_progress_{};
  std::vector<lt::peer_connection_handle> source_connections_;
};

class GatePeerPlugin final : public lt::peer_plugin {
 public:
  GatePeerPlugin(lt::peer_connection_handle peer, std::shared_ptr<StripeGate> gate)
      : gate_(std::move(gate)), from_source_(gate_->IsSource(peer)) {}

  bool on_have(lt::piece_index_t piece) override {
    if (from_source_) {
      gate_->Dealt(static_cast<int>(piece));
    } else {
      gate_->Open(static_cast<int>(piece));
    }
    return false;
  }
  bool on_bitfield(lt::bitfield const& pieces) override {
    if (from_source_) return !gate_->TrustSource();
    for (int p = 0; p < pieces.size(); ++p) {
      if (pieces.get_bit(p)) gate_->Open(p);
    }
    return false;
  }
  bool on_have_all() override {
    if (from_source_) return !gate_->TrustSource();
    gate_->OpenAll();
    return false;
  }
  bool on_piece(lt::peer_request const&, lt::span<char const>) override {
    gate_->OnBlock();
    return false;
  }

 private:
  const std::shared_ptr<StripeGate> gate_;
  const bool from_source_;
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

// The source's side of a striped swarm (network thread only): what it tells members as they
// connect, report pieces (HAVE) and leave.
class SourceSide {
 public:
  virtual ~SourceSide() = default;
  virtual void Connected(const lt::peer_connection_handle& peer) = 0;
  virtual void Reported(const lt::peer_connection_handle& peer, int piece) = 0;
  virtual void Disconnected(const lt::peer_connection_handle& peer, const lt::error_code& error) = 0;
};

void SendHaves(lt::peer_connection_handle peer, const std::vector<int>& pieces) {
  if (pieces.empty() || peer.is_disconnecting()) return;
  std::string messages;
  messages.reserve(pieces.size() * 9);
  for (int piece : pieces) {
    const char have[9] = {0, 0, 0, 5, 4, static_cast<char>((piece >> 24) & 0xff), static_cast<char>((piece >> 16) & 0xff),
                          static_cast<char>((piece >> 8) & 0xff), static_cast<char>(piece & 0xff)};
    messages.append(have, sizeof have);
  }
  peer.send_buffer(messages.data(), static_cast<int>(messages.size()));
}

// Pull: pieces dealt by PieceDealer (see there why), announced in HAVE messages the member
// believes.
class DealingSource final : public SourceSide {
 public:
  DealingSource(std::map<lt::peer_id, int> members, PieceDealer dealer)
      : members_(std::move(members)), dealer_(std::move(dealer)) {}

  void Connected(const lt::peer_connection_handle& peer) override {
    auto member = members_.find(peer.pid());
    if (member == members_.end()) return;
    live_[member->second].push_back(peer);
    SendHaves(peer, dealer_.Joined(member->second, Holds(peer)));
  }
  void Reported(const lt::peer_connection_handle& peer, int piece) override {
    auto member = members_.find(peer.pid());
    if (member == members_.end()) return;
    const std::vector<int> more = dealer_.Completed(member->second, piece, Holds(peer));
    if (auto live = live_.find(member->second); live != live_.end()) {
      for (const auto& connection : live->second) SendHaves(connection, more);
    }
  }
  void Disconnected(const lt::peer_connection_handle& peer, const lt::error_code&) override {
    auto member = members_.find(peer.pid());
    if (member == members_.end()) return;
    auto live = live_.find(member->second);
    if (live == live_.end() || std::erase(live->second, peer) == 0 || !live->second.empty()) return;
    live_.erase(live);
    dealer_.Left(member->second, Holds(peer));
  }

 private:
  static PieceDealer::Holds Holds(const lt::peer_connection_handle& peer) {
    return [peer](int piece) { return peer.has_piece(lt::piece_index_t(piece)); };
  }

  const std::map<lt::peer_id, int> members_;
  PieceDealer dealer_;
  std::map<int, std::vector<lt::peer_connection_handle>> live_;  // never an empty vector
};

// Hybrid: fixed stripes (network thread only). After its have-all, the source tells
// each member (known by peer id) that it has that member's stripe, in BitTorrent HAVE messages
// the member believes. When a member's last connection ends before it holds its stripe (it
// died or left), the pieces of its stripe it lacks go to the members of its bandwidth group
// still connected, round-robin: pieces it would have passed on still leave the source once,
// instead of waiting for every survivor's stall timeout and then being asked of the source by
// all of them. (A member falling back to the full have-all reconnects holding its stripe:
// nothing to hand over.) A member that died before it ever connected shows up as a refused
// dial to its address: nothing listens there, so its whole stripe is handed over.
class StripeDispenser final : public SourceSide {
 public:
  struct Stripe {
    std::vector<int> pieces;
    std::vector<lt::peer_id> group;  // who may take the stripe over (not the source)
    lt::tcp::endpoint address;       // where the member listens
  };
  StripeDispenser(std::map<lt::peer_id, Stripe> stripes, std::map<lt::peer_id, std::string> names)
      : stripes_(std::move(stripes)), names_(std::move(names)) {}

  void Connected(const lt::peer_connection_handle& peer) override {
    auto stripe = stripes_.find(peer.pid());
    if (stripe == stripes_.end()) return;
    live_[peer.pid()].push_back(peer);
    handed_over_.erase(peer.pid());
    SendHaves(peer, stripe->second.pieces);
    SendHaves(peer, taken_over_[peer.pid()]);
  }

  void Reported(const lt::peer_connection_handle&, int) override {}  // stripes are fixed
  void Disconnected(const lt::peer_connection_handle& peer, const lt::error_code& error) override {
    if (error == boost::asio::error::connection_refused) {
      for (const auto& [pid, stripe] : stripes_) {
        if (stripe.address == peer.remote() && !live_.count(pid)) {
          std::vector<int> everything = stripe.pieces;
          const std::vector<int>& inherited = taken_over_[pid];
          everything.insert(everything.end(), inherited.begin(), inherited.end());
          HandOver(pid, everything);
        }
      }
      return;
    }
    // A member may hold several connections at once (both sides dialled; libtorrent closes one).
    auto live = live_.find(peer.pid());
    if (live == live_.end() || std::erase(live->second, peer) == 0) return;
    if (!live->second.empty()) return;
    live_.erase(live);
    std::vector<int> lacking;
    const std::vector<int>& stripe = stripes_.at(peer.pid()).pieces;
    const std::vector<int>& inherited = taken_over_[peer.pid()];
    for (const std::vector<int>* pieces : {&stripe, &inherited}) {
      for (int p : *pieces) {
        if (!peer.has_piece(lt::piece_index_t(p))) lacking.push_back(p);
      }
    }
    HandOver(peer.pid(), lacking);
  }

 private:
  // The group's members not known to be gone take `pieces` over; those connected hear of
  // them now, the others when they connect.
  void HandOver(const lt::peer_id& gone, const std::vector<int>& pieces) {
    if (!handed_over_.insert(gone).second) return;  // until it connects again
    std::vector<lt::peer_id> takers;
    for (const lt::peer_id& pid : stripes_.at(gone).group) {
      if (!handed_over_.count(pid)) takers.push_back(pid);
    }
    if (takers.empty() || pieces.empty()) return;
    std::vector<std::vector<int>> shares(takers.size());
    for (size_t i = 0; i < pieces.size(); ++i) shares[i % takers.size()].push_back(pieces[i]);
    for (size_t t = 0; t < takers.size(); ++t) {
      std::vector<int>& held = taken_over_[takers[t]];
      held.insert(held.end(), shares[t].begin(), shares[t].end());
      if (auto live = live_.find(takers[t]); live != live_.end()) SendHaves(live->second.front(), shares[t]);
    }
    spdlog::info("swarm: {} left without {} pieces of its stripe; they go to {} members of its group", Name(gone),
                 pieces.size(), takers.size());
  }

  std::string Name(const lt::peer_id& pid) const {
    auto it = names_.find(pid);
    return it != names_.end() ? it->second : "a member";
  }

  const std::map<lt::peer_id, Stripe> stripes_;
  const std::map<lt::peer_id, std::string> names_;
  std::map<lt::peer_id, std::vector<lt::peer_connection_handle>> live_;  // never an empty vector
  std::map<lt::peer_id, std::vector<int>> taken_over_;  // pieces a member holds for others
  std::set<lt::peer_id> handed_over_;                    // gone members whose pieces went to others
};

class SourcePeerPlugin final : public lt::peer_plugin {
 public:
  SourcePeerPlugin(lt::peer_connection_handle peer, std::shared_ptr<SourceSide> side)
      : peer_(std::move(peer)), side_(std::move(side)) {}

  void sent_have_all() override { side_->Connected(peer_); }
  bool on_have(lt::piece_index_t piece) override {
    side_->Reported(peer_, static_cast<int>(piece));
    return false;
  }
  bool on_bitfield(lt::bitfield const& pieces) override {  // a member that resumed
    for (int p = 0; p < pieces.size(); ++p) {
      if (pieces.get_bit(p)) side_->Reported(peer_, p);
    }
    return false;
  }
  void on_disconnect(lt::error_code const& error) override { side_->Disconnected(peer_, error); }

 private:
  const lt::peer_connection_handle peer_;
  const std::shared_ptr<SourceSide> side_;
};

class SourceTorrentPlugin final : public lt::torrent_plugin {
 public:
  explicit SourceTorrentPlugin(std::shared_ptr<SourceSide> side) : side_(std::move(side)) {}
  std::shared_ptr<lt::peer_plugin> new_connection(lt::peer_connection_handle const& peer) override {
    return std::make_shared<SourcePeerPlugin>(peer, side_);
  }

 private:
  const std::shared_ptr<SourceSide> side_;
};

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

}  // namespace

// One torrent of this session: a plan's swarm, or a payload served to an outside client.
class TorrentSwarm final : public PullSwarm {
 public:
  TorrentSwarm(lt::session& session, std::shared_ptr<TorrentStorageTable> table, lt::sha1_hash info_hash,
               std::vector<lt::tcp::endpoint> peers, std::map<lt::peer_id, std::string> names,
               std::shared_ptr<StripeGate> gate, int piece_bytes, int64_t payload_bytes, double bin_s,
               std::function<void()> drain_alerts)
      : session_(session), table_(std::move(table)), info_hash_(info_hash), peers_(std::move(peers)),
        names_(std::move(names)), gate_(std::move(gate)), piece_bytes_(piece_bytes),
        payload_bytes_(payload_bytes), bin_s_(bin_s), drain_alerts_(std::move(drain_alerts)) {}

  ~TorrentSwarm() override { Leave(); }

  void SetHandle(lt::torrent_handle handle) { handle_ = std::move(handle); }
  const lt::torrent_handle& handle() const { return handle_; }

  void Start() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      started_ = Clock::now();
    }
    if (gate_) {
      // The gate lives on the network thread; reach it there.
      boost::asio::post(session_.get_context(), [gate = gate_] { gate->Started(); });
    }
    for (const lt::tcp::endpoint& peer : peers_) handle_.connect_peer(peer);
  }

  void Fetch(const std::vector<uint64_t>& chunks) override {
    if (left_ || chunks.empty()) return;
    if (gate_) {
      boost::asio::post(session_.get_context(), [gate = gate_, chunks] { gate->Want(chunks); });
      return;
    }
    std::vector<std::pair<lt::piece_index_t, lt::download_priority_t>> wanted;
    for (uint64_t c : chunks) wanted.emplace_back(lt::piece_index_t(static_cast<int>(c)), lt::low_priority);
    handle_.prioritize_pieces(wanted);
  }

  void ChunkVerifiedByPush(uint64_t chunk, std::span<const uint8_t> data) override {
    if (left_) return;
    // libtorrent learns of a piece only by "adding" it: the store already holds it, so the
    // write is skipped and the check passes; then the peers are told.
    handle_.add_piece(lt::piece_index_t(static_cast<int>(chunk)),
                      std::vector<char>(reinterpret_cast<const char*>(data.data()),
                                        reinterpret_cast<const char*>(data.data()) + data.size()));
  }

  void Leave() override {
    if (left_.exchange(true)) return;
    try {
      uploaded_ = handle_.status({}).total_payload_upload;
    } catch (const std::exception&) {
    }
    session_.remove_torrent(handle_);
    table_->Unregister(info_hash_);
  }

  SwarmReport Report() const override {
    // Blocks whose alerts wait for the next batch belong in the report too.
    drain_alerts_();
    SwarmReport report;
    report.bin_s = bin_s_;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, receipt] : receipts_) report.received.push_back(receipt);
    report.uploaded_bytes = uploaded_;
    if (!left_) {
      try {
        report.uploaded_bytes = static_cast<uint64_t>(handle_.status({}).total_payload_upload);
      } catch (const std::exception&) {
      }
    }
    return report;
  }

  // Alert thread: a block of `piece` arrived from the peer with id `pid` at `when`.
  void RecordBlock(const lt::peer_id& pid, const lt::tcp::endpoint& endpoint, int piece, int block,
                   Clock::time_point when) {
    const int64_t piece_start = int64_t{piece} * piece_bytes_;
    const int64_t piece_size = std::min<int64_t>(piece_bytes_, payload_bytes_ - piece_start);
    const int64_t block_bytes = std::min<int64_t>(lt::default_block_size, piece_size - int64_t{block} * lt::default_block_size);
    // Pieces the push path handed over (add_piece) finish with no peer: not swarm traffic.
    if (block_bytes <= 0 || endpoint.address().is_unspecified()) return;
    auto name = names_.find(pid);
    const std::string from = name != names_.end() ? name->second
                                                  : endpoint.address().to_string();
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_ == Clock::time_point{}) started_ = when;
    const double t = std::max(0.0, std::chrono::duration<double>(when - started_).count());
    PeerReceipt& r = receipts_[from];
    if (r.blocks == 0) {
      r.from = from;
      r.first_s = t;
    }
    r.last_s = t;
    r.bytes += static_cast<uint64_t>(block_bytes);
    ++r.blocks;
    const auto bin = static_cast<size_t>(t / bin_s_);
    if (bin < kMaxBins) {
      if (r.bytes_per_bin.size() <= bin) r.bytes_per_bin.resize(bin + 1, 0);
      r.bytes_per_bin[bin] += static_cast<uint64_t>(block_bytes);
    }
  }

 private:
  static constexpr size_t kMaxBins = 1 << 16;  // bounds a report: about 4.5 hours at 0.25 s

  lt::session& session_;
  const std::shared_ptr<TorrentStorageTable> table_;
  const lt::sha1_hash info_hash_;
  const std::vector<lt::tcp::endpoint> peers_;
  const std::map<lt::peer_id, std::string> names_;
  const std::shared_ptr<StripeGate> gate_;
  const int piece_bytes_;
  const int64_t payload_bytes_;
  const double bin_s_;
  const std::function<void()> drain_alerts_;
  lt::torrent_handle handle_;
  std::atomic<bool> left_{false};
  std::atomic<uint64_t> uploaded_{0};
  mutable std::mutex mutex_;
  Clock::time_point started_{};                  // guarded by mutex_
  std::map<std::string, PeerReceipt> receipts_;  // guarded by mutex_
};

class TorrentSession::Impl {
 public:
  Impl(const TorrentSessionOptions& options, lt::session_params params, std::shared_ptr<TorrentStorageTable> table)
      : options_(options), table_(std::move(table)), session_(std::move(params)) {
    alerts_ = std::thread([this] { PumpAlerts(); });
  }
  ~Impl() {
    stop_ = true;
    alerts_.join();
  }

  // This daemon's part in one torrent.
  struct Role {
    std::vector<lt::tcp::endpoint> peers;          // to dial at Start()
    std::map<lt::peer_id, std::string> names;      // peer id -> member, for observations
    std::optional<std::vector<bool>> stripe;       // a striped member: its stripe
    lt::tcp::endpoint source;                      // ... and the source's address
    std::shared_ptr<SourceSide> source_side;       // the source of a striped swarm
    bool push_first = false;                       // a hybrid member: pull only what Fetch() asks
    std::function<void()> on_chunk_verified;
    std::function<void(uint64_t)> on_chunk_shared;  // a pull member: see SharedPieces
    std::function<void()> on_first_upload;
    std::set<lt::peer_id> sharers;                   // ... and the peers it waits for
    TorrentPluginFactory extension;                // one more plugin (ServeTo's client tracker)
  };
  Result<std::shared_ptr<PullSwarm>> Add(const std::string& torrent, std::shared_ptr<PayloadStore> store, Role role);

  const TorrentSessionOptions options_;
  const std::shared_ptr<TorrentStorageTable> table_;
  lt::session session_;

 private:
  void PumpAlerts();
  // Hands the queued alerts to their swarms; any thread.
  void DrainAlerts();
  std::shared_ptr<TorrentSwarm> FindSwarm(const lt::torrent_handle& handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = swarms_.find(handle);
    if (it == swarms_.end()) return nullptr;
    std::shared_ptr<TorrentSwarm> swarm = it->second.lock();
    if (swarm == nullptr) swarms_.erase(it);
    return swarm;
  }

  std::atomic<bool> stop_{false};
  std::mutex alerts_mutex_;
  std::thread alerts_;
  std::mutex mutex_;
  std::map<lt::torrent_handle, std::weak_ptr<TorrentSwarm>> swarms_;  // guarded by mutex_
};

void TorrentSession::Impl::PumpAlerts() {
  while (!stop_) {
    // In batches, not woken by every alert: a fast swarm posts one per 16 KiB block, and a
    // thread woken for each competed for the cores with the transfer. Each block carries its
    // own timestamp, so the observations lose nothing.
    std::this_thread::sleep_for(kAlertBatch);
    DrainAlerts();
  }
}

void TorrentSession::Impl::DrainAlerts() {
  // An alert is valid until the next pop_alerts(): one drain at a time.
  std::lock_guard<std::mutex> lock(alerts_mutex_);
  std::vector<lt::alert*> alerts;
  session_.pop_alerts(&alerts);
  for (lt::alert* a : alerts) {
    if (auto* block = lt::alert_cast<lt::block_finished_alert>(a)) {
      if (auto swarm = FindSwarm(block->handle)) {
        // When libtorrent saw the block, not when this thread got to its alert: alerts come
        // in batches, and a busy host would otherwise pile a second's blocks into one bin
        // (tomography reads the bins as rates).
        const auto when = Clock::now() - (lt::clock_type::now() - block->timestamp());
        swarm->RecordBlock(block->pid, block->endpoint, static_cast<int>(block->piece_index), block->block_index,
                           std::chrono::time_point_cast<Clock::duration>(when));
      }
    } else if (a->category() & lt::alert_category::error) {
      spdlog::warn("swarm: {}", a->message());
    }
  }
}

Result<std::shared_ptr<PullSwarm>> TorrentSession::Impl::Add(const std::string& torrent,
                                                               std::shared_ptr<PayloadStore> store, Role role) {
  const PayloadIdentity& identity = store->identity();
  lt::error_code ec;
  auto info = std::make_shared<lt::torrent_info>(lt::span<char const>(torrent.data(), static_cast<std::ptrdiff_t>(torrent.size())),
                                                  ec, lt::from_span);
  if (ec) return Status::InvalidArgument("the plan's torrent does not parse: " + ec.message());
  if (!info->info_hashes().has_v1() || info->num_files() != 1 ||
      static_cast<uint64_t>(info->total_size()) != identity.size_bytes ||
      static_cast<uint64_t>(info->piece_length()) != identity.chunk_bytes ||
      static_cast<uint64_t>(info->num_pieces()) != identity.NumChunks()) {
    return Status::InvalidArgument("the plan's torrent does not describe the payload (one file of " +
                                   std::to_string(identity.size_bytes) + " bytes in pieces of " +
                                   std::to_string(identity.chunk_bytes) + ")");
  }
  const int pieces = info->num_pieces();
  auto storage = std::make_shared<TorrentStorage>();
  storage->store = store;
  storage->on_chunk_verified = std::move(role.on_chunk_verified);
  storage->on_first_upload = std::move(role.on_first_upload);
  for (int p = 0; p < pieces; ++p) storage->piece_sha1.push_back(info->hash_for_piece(lt::piece_index_t(p)));
  const lt::sha1_hash info_hash = info->info_hashes().get_best();
  if (table_->Find(info_hash) != nullptr) {
    return Status::AlreadyExists("this daemon is already in the swarm of torrent " + InfoHashHex(info_hash));
  }

  lt::add_torrent_params params;
  params.ti = info;
  params.save_path = ".";  // unused: StoreDiskIo keeps every byte in the PayloadStore
  params.flags &= ~(lt::torrent_flags::paused | lt::torrent_flags::auto_managed | lt::torrent_flags::need_save_resume);
  params.have_pieces.resize(pieces, false);
  std::vector<bool> held(static_cast<size_t>(pieces));
  for (int p = 0; p < pieces; ++p) {
    held[p] = store->Has(static_cast<uint64_t>(p));
    if (held[p]) params.have_pieces.set_bit(lt::piece_index_t(p));
  }
  std::shared_ptr<StripeGate> gate;
  if (role.stripe) {
    if (role.stripe->size() != static_cast<size_t>(pieces)) return Status::Internal("stripe does not match the torrent");
    params.piece_priorities.resize(static_cast<size_t>(pieces), lt::dont_download);
    for (int p = 0; p < pieces && !role.push_first; ++p) {
      if ((*role.stripe)[p]) params.piece_priorities[p] = lt::top_priority;
    }
    const auto kind = role.push_first ? StripeGate::Kind::kHybrid : StripeGate::Kind::kPull;
    gate = std::make_shared<StripeGate>(kind, *role.stripe, held, role.source,
                                        std::chrono::duration_cast<Clock::duration>(options_.stall_timeout));
    // The plugin is made on the network thread before any connection: the gate gets its
    // handle there, before a peer's HAVE can reach it.
    params.extensions.push_back([gate](lt::torrent_handle const& handle, lt::client_data_t) {
      gate->Arm(handle);
      return std::make_shared<GateTorrentPlugin>(gate);
    });
  }
  if (role.push_first) params.piece_priorities.assign(static_cast<size_t>(pieces), lt::dont_download);
  if (role.source_side) {
    params.extensions.push_back([side = role.source_side](lt::torrent_handle const&, lt::client_data_t) {
      return std::make_shared<SourceTorrentPlugin>(side);
    });
  }
  if (role.on_chunk_shared && !role.sharers.empty()) {
    auto shared = std::make_shared<SharedPieces>(std::move(role.sharers), held, std::move(role.on_chunk_shared));
    params.extensions.push_back([shared](lt::torrent_handle const&, lt::client_data_t) {
      return std::make_shared<SharedTorrentPlugin>(shared);
    });
  }
  if (role.extension) params.extensions.push_back(std::move(role.extension));
  auto swarm = std::make_shared<TorrentSwarm>(session_, table_, info_hash, std::move(role.peers), std::move(role.names),
                                              gate, info->piece_length(), info->total_size(), options_.bin_s,
                                              [this] { DrainAlerts(); });
  table_->Register(info_hash, storage);
  lt::torrent_handle handle = session_.add_torrent(std::move(params), ec);
  if (ec) {
    table_->Unregister(info_hash);
    return Status::Internal("libtorrent refused the torrent: " + ec.message());
  }
  swarm->SetHandle(handle);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    swarms_[handle] = swarm;
  }
  return std::shared_ptr<PullSwarm>(swarm);
}

TorrentSession::TorrentSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TorrentSession::~TorrentSession() = default;

Result<std::unique_ptr<TorrentSession>> TorrentSession::Start(TorrentSessionOptions options) {
  GRIDCAST_RETURN_IF_ERROR(Endpoint(options.listen_address).status());
  lt::settings_pack s;
  s.set_str(lt::settings_pack::listen_interfaces, options.listen_address);
  s.set_str(lt::settings_pack::peer_fingerprint, PeerIdForMember(options.member_name));
  s.set_bool(lt::settings_pack::enable_dht, false);
  s.set_bool(lt::settings_pack::enable_lsd, false);
  s.set_bool(lt::settings_pack::enable_upnp, false);
  s.set_bool(lt::settings_pack::enable_natpmp, false);
  s.set_bool(lt::settings_pack::enable_outgoing_utp, false);
  s.set_bool(lt::settings_pack::enable_incoming_utp, false);
  s.set_bool(lt::settings_pack::allow_multiple_connections_per_ip, true);
  s.set_int(lt::settings_pack::alert_mask, lt::alert_category::error | lt::alert_category::block_progress);
  // One alert per received 16 KiB block feeds the observations: at 10 Gbit/s that is ~80,000
  // a second, and with libtorrent's default queue (2,000) a member whose alert thread waited
  // for a core dropped blocks from its observations (kAlertBatch at that rate is 8,000).
  // Bounded still (about 100 bytes each).
  s.set_int(lt::settings_pack::alert_queue_size, 1 << 16);
  s.set_int(lt::settings_pack::active_downloads, -1);
  s.set_int(lt::settings_pack::active_seeds, -1);
  s.set_int(lt::settings_pack::active_limit, -1);
  // Peers join at slightly different moments; a refused dial is retried soon, not in a minute.
  s.set_int(lt::settings_pack::min_reconnect_time, 1);
  // A striped member learns what the source holds one HAVE at a time; libtorrent would close
  // the connection to an upload-only peer that is not interesting yet.
  s.set_bool(lt::settings_pack::close_redundant_connections, false);
  // The source deals a pull member more pieces when the member reports (HAVE) one it was dealt,
  // which in the member's view the source already holds.
  s.set_bool(lt::settings_pack::send_redundant_have, true);
  if (!options.libtorrent_defaults) {
    s.set_int(lt::settings_pack::whole_pieces_threshold, 0);
    s.set_int(lt::settings_pack::request_queue_time, 1);
    s.set_int(lt::settings_pack::choking_algorithm, lt::settings_pack::fixed_slots_choker);
    s.set_int(lt::settings_pack::unchoke_slots_limit, -1);
    s.set_int(lt::settings_pack::send_buffer_watermark, 4 << 20);
    s.set_int(lt::settings_pack::out_enc_policy, lt::settings_pack::pe_disabled);
    s.set_int(lt::settings_pack::in_enc_policy, lt::settings_pack::pe_enabled);
  }
  lt::session_params params(std::move(s));
  params.extensions.clear();  // no peer exchange or metadata transfer: the plan says who and what
  auto table = std::make_shared<TorrentStorageTable>();
  params.disk_io_constructor = [table](lt::io_context& io, lt::settings_interface const&, lt::counters&) {
    return MakeStoreDiskIo(io, table);
  };
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(options, std::move(params), table);
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("cannot start the BitTorrent session: ") + e.what());
  }
  // Listening is asynchronous; a port that cannot be bound shows up as no listen port.
  for (int i = 0; i < 50 && !impl->session_.is_listening(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!impl->session_.is_listening()) {
    return Status::Unavailable("cannot listen for BitTorrent on " + options.listen_address);
  }
  return std::unique_ptr<TorrentSession>(new TorrentSession(std::move(impl)));
}

Result<std::string> TorrentSession::MakeTorrent(const PayloadStore& store, const std::string& file_name) {
  const PayloadIdentity& identity = store.identity();
  if (identity.size_bytes == 0) return Status::InvalidArgument("BitTorrent cannot carry an empty payload");
  GRIDCAST_RETURN_IF_ERROR(CheckPieceBytes(identity.chunk_bytes));
  if (!store.Complete()) return Status::FailedPrecondition("only a complete payload has a torrent");
  if (file_name.empty() || file_name.find('/') != std::string::npos) {
    return Status::InvalidArgument("torrent file name must be one path component");
  }
  lt::file_storage files;
  files.add_file(file_name, static_cast<std::int64_t>(identity.size_bytes));
  lt::create_torrent maker(files, static_cast<int>(identity.chunk_bytes), lt::create_torrent::v1_only);
  maker.set_creator("gridcast");
  std::vector<uint8_t> buffer(identity.chunk_bytes);
  for (uint64_t c = 0; c < identity.NumChunks(); ++c) {
    std::span<uint8_t> chunk(buffer.data(), identity.ChunkSize(c));
    GRIDCAST_RETURN_IF_ERROR(store.ReadChunk(c, chunk));
    maker.set_hash(lt::piece_index_t(static_cast<int>(c)),
                   lt::hasher(reinterpret_cast<const char*>(chunk.data()), static_cast<int>(chunk.size())).final());
  }
  std::string out;
  lt::bencode(std::back_inserter(out), maker.generate());
  return out;
}

Result<std::string> TorrentSession::MagnetLink(const std::string& torrent) {
  lt::error_code ec;
  lt::torrent_info info(lt::span<char const>(torrent.data(), static_cast<std::ptrdiff_t>(torrent.size())), ec,
                        lt::from_span);
  if (ec) return Status::InvalidArgument("not a torrent: " + ec.message());
  return lt::make_magnet_uri(info);
}

Result<std::shared_ptr<PullSwarm>> TorrentSession::Join(SwarmJoin join) {
  const Plan& plan = join.plan;
  const int p = static_cast<int>(plan.members.size());
  if (plan.mode == PlanMode::kPush) return Status::InvalidArgument("a push plan has no swarm");
  if (join.self < 0 || join.self >= p || static_cast<int>(join.bt_addresses.size()) != p) {
    return Status::InvalidArgument("swarm member index or addresses do not match the plan");
  }
  std::vector<lt::tcp::endpoint> endpoints;
  std::map<lt::peer_id, std::string> names;
  for (int m = 0; m < p; ++m) {
    // A slice of the plan names only the members this one deals with (proto/plan_slice.h).
    if (plan.members[m].empty()) {
      endpoints.emplace_back();
      continue;
    }
    GRIDCAST_ASSIGN_OR_RETURN(lt::tcp::endpoint endpoint, Endpoint(join.bt_addresses[m]));
    endpoints.push_back(endpoint);
    const std::string id = PeerIdForMember(plan.members[m]);
    names[lt::peer_id(id.data())] = plan.members[m];
  }
  const Swarm& swarm = plan.swarm;
  Impl::Role role;
  role.names = std::move(names);
  role.on_chunk_verified = std::move(join.on_chunk_verified);
  role.on_first_upload = std::move(join.on_first_upload);
  const bool striped = !swarm.free_choice;
  auto stripe_of = [&](const SwarmMember& m) {
    std::vector<bool> stripe(plan.NumChunks(), false);
    for (const ChunkRange& range : m.stripe) {
      for (uint64_t c = range.begin; c < range.end; c += range.step) stripe[c] = true;
    }
    return stripe;
  };
  auto peer_id_of = [&](int member) {
    const std::string id = PeerIdForMember(plan.members[member]);
    return lt::peer_id(id.data());
  };
  if (join.self == swarm.source && striped && plan.mode == PlanMode::kPull) {
    std::map<lt::peer_id, int> index;
    std::vector<PieceDealer::Member> members(swarm.members.size());
    for (size_t i = 0; i < swarm.members.size(); ++i) index[peer_id_of(swarm.members[i].member)] = static_cast<int>(i);
    const std::vector<int> group = swarm.GroupOfEachMember();
    for (size_t i = 0; i < swarm.members.size(); ++i) {
      const std::vector<bool> in_stripe = stripe_of(swarm.members[i]);
      for (size_t c = 0; c < in_stripe.size(); ++c) {
        if (in_stripe[c]) members[i].stripe.push_back(static_cast<int>(c));
      }
      for (size_t j = 0; j < swarm.members.size(); ++j) {
        if (j != i && group[j] == group[i]) members[i].group.push_back(static_cast<int>(j));
      }
    }
    const int window = std::max<int>(2, static_cast<int>(kDealtBytes / plan.chunk_bytes));
    role.source_side = std::make_shared<DealingSource>(std::move(index), PieceDealer(std::move(members), window));
  } else if (join.self == swarm.source && striped) {
    std::map<lt::peer_id, StripeDispenser::Stripe> stripes;
    const std::vector<int> group = swarm.GroupOfEachMember();
    for (size_t i = 0; i < swarm.members.size(); ++i) {
      const SwarmMember& m = swarm.members[i];
      StripeDispenser::Stripe& stripe = stripes[peer_id_of(m.member)];
      const std::vector<bool> in_stripe = stripe_of(m);
      for (size_t c = 0; c < in_stripe.size(); ++c) {
        if (in_stripe[c]) stripe.pieces.push_back(static_cast<int>(c));
      }
      for (size_t j = 0; j < swarm.members.size(); ++j) {
        if (j != i && group[j] == group[i]) stripe.group.push_back(peer_id_of(swarm.members[j].member));
      }
      stripe.address = endpoints[m.member];
    }
    role.source_side = std::make_shared<StripeDispenser>(std::move(stripes), role.names);
  }
  for (const SwarmMember& m : swarm.members) {
    if (m.member != join.self) continue;
    for (int peer : m.peers) {
      role.peers.push_back(endpoints[peer]);
      if (peer != swarm.source && join.on_chunk_shared) role.sharers.insert(peer_id_of(peer));
    }
    role.on_chunk_shared = join.on_chunk_shared;
    if (striped) {
      role.stripe = stripe_of(m);
      role.source = endpoints[swarm.source];
    }
    role.push_first = plan.mode == PlanMode::kHybrid;
  }
  return impl_->Add(join.torrent, std::move(join.store), std::move(role));
}

namespace {

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

Status TorrentSession::CheckPieceBytes(uint64_t piece_bytes) {
  if (piece_bytes < 16384 || (piece_bytes & (piece_bytes - 1)) != 0 || piece_bytes > (64u << 20)) {
    return Status::InvalidArgument("a BitTorrent piece must be a power of two from 16 KiB to 64 MiB, not " +
                                   std::to_string(piece_bytes) + " bytes");
  }
  return Status::Ok();
}

Status TorrentSession::CheckPeerAddress(const std::string& address) { return Endpoint(address).status(); }

Result<std::shared_ptr<ClientServe>> TorrentSession::ServeTo(const std::string& torrent,
                                                             std::shared_ptr<PayloadStore> store,
                                                             const std::string& address) {
  GRIDCAST_ASSIGN_OR_RETURN(lt::tcp::endpoint client, Endpoint(address));
  if (!store->Complete()) return Status::FailedPrecondition("only a complete payload can be served");
  const uint64_t payload_bytes = store->identity().size_bytes;
  auto tracker = std::make_shared<ClientTracker>(store->identity(), client);
  Impl::Role role;
  role.peers = {client};
  role.on_chunk_verified = [] {};
  role.extension = [tracker](lt::torrent_handle const& handle, lt::client_data_t) {
    return std::make_shared<ClientTorrentPlugin>(handle, tracker);
  };
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<PullSwarm> swarm, impl_->Add(torrent, std::move(store), std::move(role)));
  swarm->Start();
  return std::shared_ptr<ClientServe>(
      std::make_shared<ServedClient>(std::move(swarm), std::move(tracker), payload_bytes));
}

}  // namespace gridcast
