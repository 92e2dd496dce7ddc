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

#include "cluster/cluster_file.h"
#include "collectives/validate_plan.h"
#include "common/crypto.h"
#include "common/hex.h"
#include "daemon/pull/client_serve.h"
#include "daemon/pull/member_plugins.h"
#include "daemon/pull/source_side.h"
#include "daemon/pull/store_disk_io.h"
#include "daemon/pull/plan_torrent.h"

namespace gridcast {

std::string PeerIdForMember(const std::string& member_name) {
  // A client prefix in the usual "-XXnnnn-" style, then 12 hex digits of the name's SHA-256.
  return "-GC0100-" + ToHex(Sha256(AsBytes(member_name))).substr(0, 12);
}

namespace {

using Clock = std::chrono::steady_clock;

// How often the alert thread collects alerts (the queue holds more than a batch: Start()).
constexpr std::chrono::milliseconds kAlertBatch{100};

Result<lt::tcp::endpoint> Endpoint(const std::string& address) {
  GRIDCAST_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(address));
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(host_port.first, ec);
  if (ec) return Status::InvalidArgument("BitTorrent address '" + address + "' is not ip:port");
  return lt::tcp::endpoint(ip, host_port.second);
}

}  // namespace

// One torrent of this session: a plan's swarm, or a payload served to an outside client.
class TorrentSwarm final : public PullSwarm {
 public:
  TorrentSwarm(lt::session& session, std::shared_ptr<TorrentStorageTable> table, lt::sha1_hash info_hash,
               std::vector<lt::tcp::endpoint> peers, std::map<lt::peer_id, std::string> names,
               std::shared_ptr<StripeGate> gate, bool looks_first, int piece_bytes, int64_t payload_bytes,
               double bin_s, std::shared_ptr<DaemonCounters> counters, std::function<void()> drain_alerts,
               std::function<void()> on_leave)
      : session_(session), table_(std::move(table)), info_hash_(info_hash), peers_(std::move(peers)),
        names_(std::move(names)), gate_(std::move(gate)), looks_first_(looks_first), piece_bytes_(piece_bytes),
        payload_bytes_(payload_bytes), bin_s_(bin_s), counters_(std::move(counters)),
        drain_alerts_(std::move(drain_alerts)), on_leave_(std::move(on_leave)) {}

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
    // Without a gate to hold its wants back, a member that looks for chunks it holds already
    // joins once it looked through every chunk (LookedThrough).
    if (!looks_first_ || gate_) Join();
  }

  void LookedThrough(uint64_t end) override {
    if (left_) return;
    if (gate_) {
      boost::asio::post(session_.get_context(), [gate = gate_, end] { gate->LookedThrough(end); });
    } else if (end * static_cast<uint64_t>(piece_bytes_) >= static_cast<uint64_t>(payload_bytes_)) {
      Join();
    }
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
    if (left_) return;
    // Recorded before left_ says so: Report() reads uploaded_ from then on, and must never see
    // less than it saw before (it is a counter).
    try {
      uploaded_ = std::max<uint64_t>(uploaded_, handle_.status({}).total_payload_upload);
    } catch (const std::exception&) {
    }
    if (left_.exchange(true)) return;
    session_.remove_torrent(handle_);
    table_->Unregister(info_hash_);
    on_leave_();
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
    const int64_t block_bytes = BlockBytes(piece, block);
    // Pieces the push path handed over (add_piece) finish with no peer: not swarm traffic.
    if (block_bytes <= 0 || endpoint.address().is_unspecified()) return;
    const std::string from = PeerName(pid, endpoint);
    if (counters_) TrafficOf(pid, from).received_bytes.fetch_add(static_cast<uint64_t>(block_bytes), std::memory_order_relaxed);
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

  // Alert thread: a block of `piece` was sent to the peer with id `pid`.
  void RecordUpload(const lt::peer_id& pid, const lt::tcp::endpoint& endpoint, int piece, int block) {
    const int64_t block_bytes = BlockBytes(piece, block);
    if (block_bytes <= 0 || !counters_) return;
    auto known = traffic_.find(pid);  // the alert thread's; no name built for a known peer
    PeerTraffic& traffic = known != traffic_.end() ? *known->second : TrafficOf(pid, PeerName(pid, endpoint));
    traffic.sent_bytes.fetch_add(static_cast<uint64_t>(block_bytes), std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kMaxBins = 1 << 16;  // bounds a report: about 4.5 hours at 0.25 s

  // Added paused (Impl::Add): resuming makes libtorrent dial the peers at once, where a
  // torrent already running dials new peers only on its next one-second tick. Once.
  void Join() {
    if (joined_.exchange(true)) return;
    for (const lt::tcp::endpoint& peer : peers_) handle_.connect_peer(peer);
    handle_.resume();
  }

  int64_t BlockBytes(int piece, int block) const {
    const int64_t piece_start = int64_t{piece} * piece_bytes_;
    const int64_t piece_size = std::min<int64_t>(piece_bytes_, payload_bytes_ - piece_start);
    return std::min<int64_t>(lt::default_block_size, piece_size - int64_t{block} * lt::default_block_size);
  }
  // The daemon's counters for a peer, found in DaemonCounters (a lock and a map of names) once
  // per peer rather than once per 16 KiB block. Alert thread only.
  PeerTraffic& TrafficOf(const lt::peer_id& pid, const std::string& name) {
    PeerTraffic*& traffic = traffic_[pid];
    if (traffic == nullptr) traffic = &counters_->Peer(name, Transport::kBitTorrent);
    return *traffic;
  }

  // The member behind a peer id, or the address of a peer that is not one (a client served).
  std::string PeerName(const lt::peer_id& pid, const lt::tcp::endpoint& endpoint) const {
    auto name = names_.find(pid);
    return name != names_.end() ? name->second : endpoint.address().to_string();
  }

  lt::session& session_;
  const std::shared_ptr<TorrentStorageTable> table_;
  const lt::sha1_hash info_hash_;
  const std::vector<lt::tcp::endpoint> peers_;
  const std::map<lt::peer_id, std::string> names_;
  const std::shared_ptr<StripeGate> gate_;
  const bool looks_first_;
  const int piece_bytes_;
  const int64_t payload_bytes_;
  const double bin_s_;
  const std::shared_ptr<DaemonCounters> counters_;
  std::map<lt::peer_id, PeerTraffic*> traffic_;  // alert thread only (DrainAlerts: one at a time)
  const std::function<void()> drain_alerts_;
  const std::function<void()> on_leave_;
  lt::torrent_handle handle_;
  std::atomic<bool> left_{false};
  std::atomic<bool> joined_{false};
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
    // The plan's source: a seed from the start, though a source that seals its payload as it
    // sends it holds few chunks yet (StoreDiskIo's reads wait for the others).
    bool seed = false;
    bool looks_first = false;                      // SwarmJoin::looks_first
    int upload_slots = 0;                          // peers it uploads to at once; 0: all
    std::function<void(bool newly)> on_chunk_verified;
    std::function<void(uint64_t)> on_chunk_shared;  // a pull member: see SharedPieces
    std::function<void()> on_first_upload;
    std::set<lt::peer_id> sharers;                   // ... and the peers it waits for
    StripeGate::Limits limits;                       // SwarmMember::takes_only
    TorrentPluginFactory extension;                // one more plugin (ServeTo's client tracker)
  };
  Result<std::shared_ptr<PullSwarm>> Add(std::shared_ptr<lt::torrent_info> info, std::shared_ptr<PayloadStore> store,
                                         Role role);

  const TorrentSessionOptions options_;
  const std::shared_ptr<TorrentStorageTable> table_;
  lt::session session_;

 private:
  void PumpAlerts();
  // Hands the queued alerts to their swarms; any thread.
  void DrainAlerts();
  // Upload slots are the session's, not a torrent's: the plan's cap describes this member's
  // uplink, the same for every torrent on it, so the session takes the smallest cap of the
  // swarms it runs (none: the daemon's --bt-upload-slots). libtorrent's per-torrent
  // max_uploads is no substitute: with unlimited session slots its choker never chokes a
  // peer it once unchoked, and a 128-member pull with per-torrent caps stalled at 3.8x the
  // bound when the first peers it served stopped asking.
  void HoldUploadSlots(int slots) {
    std::lock_guard<std::mutex> lock(mutex_);
    upload_caps_.insert(slots);
    ApplyUploadSlots();
  }
  void ReleaseUploadSlots(int slots) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto held = upload_caps_.find(slots);
    if (held == upload_caps_.end()) return;
    upload_caps_.erase(held);
    ApplyUploadSlots();
  }
  void ApplyUploadSlots() {  // REQUIRES: mutex_ held
    // An operator's --bt-upload-slots, or libtorrent's own choker, is left as it was set.
    if (options_.libtorrent_defaults || options_.upload_slots != TorrentSessionOptions{}.upload_slots) return;
    const int slots = upload_caps_.empty() ? options_.upload_slots : *upload_caps_.begin();
    if (slots == applied_upload_slots_) return;
    lt::settings_pack pack;
    pack.set_int(lt::settings_pack::unchoke_slots_limit, slots);
    session_.apply_settings(std::move(pack));
    applied_upload_slots_ = slots;
  }

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
  std::multiset<int> upload_caps_;                                     // guarded by mutex_
  int applied_upload_slots_ = TorrentSessionOptions{}.upload_slots;   // guarded by mutex_
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
    } else if (auto* upload = lt::alert_cast<lt::block_uploaded_alert>(a)) {
      if (auto swarm = FindSwarm(upload->handle)) {
        swarm->RecordUpload(upload->pid, upload->endpoint, static_cast<int>(upload->piece_index), upload->block_index);
      }
    } else if (lt::alert_cast<lt::hash_failed_alert>(a) != nullptr) {
      spdlog::warn("swarm: {}", a->message());
      if (options_.counters) options_.counters->ChunkRefused(Transport::kBitTorrent);
    } else if (a->category() & lt::alert_category::error) {
      spdlog::warn("swarm: {}", a->message());
    }
  }
}

Result<std::shared_ptr<PullSwarm>> TorrentSession::Impl::Add(std::shared_ptr<lt::torrent_info> info,
                                                               std::shared_ptr<PayloadStore> store, Role role) {
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
  // Paused until Start() (TorrentSwarm::Start says why). A paused torrent refuses peers: a
  // member that dials one that has not started yet is dialled back when that one starts.
  params.flags &= ~(lt::torrent_flags::auto_managed | lt::torrent_flags::need_save_resume);
  params.flags |= lt::torrent_flags::paused;
  params.have_pieces.resize(pieces, false);
  std::vector<bool> held(static_cast<size_t>(pieces));
  for (int p = 0; p < pieces; ++p) {
    held[p] = role.seed || store->Has(static_cast<uint64_t>(p));
    if (held[p]) params.have_pieces.set_bit(lt::piece_index_t(p));
  }
  // Before the gate, which keeps some of what limited peers announce from the plugins after it
  // (StripeGate::Limits): a peer this member takes nothing from may still ask it for pieces.
  if (role.on_chunk_shared && !role.sharers.empty()) {
    params.extensions.push_back(SharedPiecesPlugin(std::move(role.sharers), held, std::move(role.on_chunk_shared)));
  }
  std::shared_ptr<StripeGate> gate;
  if (role.stripe) {
    if (role.stripe->size() != static_cast<size_t>(pieces)) return Status::Internal("stripe does not match the torrent");
    params.piece_priorities.resize(static_cast<size_t>(pieces), lt::dont_download);
    for (int p = 0; p < pieces && !role.push_first && !role.looks_first; ++p) {
      if ((*role.stripe)[p]) params.piece_priorities[p] = lt::top_priority;
    }
    const auto kind = role.push_first ? StripeGate::Kind::kHybrid : StripeGate::Kind::kPull;
    gate = std::make_shared<StripeGate>(kind, *role.stripe, held, role.looks_first, role.source,
                                        std::move(role.limits),
                                        std::chrono::duration_cast<Clock::duration>(options_.stall_timeout));
    params.extensions.push_back(GatePlugin(gate));
  }
  if (role.push_first) params.piece_priorities.assign(static_cast<size_t>(pieces), lt::dont_download);
  if (role.source_side) params.extensions.push_back(SourcePlugin(role.source_side));
  if (role.extension) params.extensions.push_back(std::move(role.extension));
  auto swarm = std::make_shared<TorrentSwarm>(session_, table_, info_hash, std::move(role.peers), std::move(role.names),
                                              gate, role.looks_first, info->piece_length(), info->total_size(),
                                              options_.bin_s,
                                              options_.counters,
                                              [this] { DrainAlerts(); }, [this, slots = role.upload_slots] {
                                                if (slots > 0) ReleaseUploadSlots(slots);
                                              });
  table_->Register(info_hash, storage);
  if (role.upload_slots > 0) HoldUploadSlots(role.upload_slots);
  lt::error_code ec;
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
  // Uploaded blocks and failed piece checks feed the daemon's counters (DaemonCounters).
  s.set_int(lt::settings_pack::alert_mask, lt::alert_category::error | lt::alert_category::block_progress |
                                               lt::alert_category::upload | lt::alert_category::status);
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
    s.set_int(lt::settings_pack::unchoke_slots_limit, options.upload_slots);
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
  if (!plan.HasSwarm()) return Status::InvalidArgument("a push plan has no swarm");
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
    names[PeerIdOf(plan.members[m])] = plan.members[m];
  }
  const Swarm& swarm = plan.swarm;
  Impl::Role role;
  role.names = std::move(names);
  role.on_chunk_verified = std::move(join.on_chunk_verified);
  role.on_first_upload = std::move(join.on_first_upload);
  const bool striped = !swarm.free_choice;
  if (join.self == swarm.source) {
    role.seed = true;
    role.upload_slots = swarm.source_upload_slots;
    if (striped) role.source_side = MakeSourceSide(plan, endpoints, role.names);
  }
  for (const SwarmMember& m : swarm.members) {
    if (m.member != join.self) continue;
    for (int peer : m.peers) {
      role.peers.push_back(endpoints[peer]);
      if (peer != swarm.source && join.on_chunk_shared) role.sharers.insert(PeerIdOf(plan.members[peer]));
    }
    for (const PeerChunks& limit : m.takes_only) {
      std::vector<bool>& taken = role.limits[PeerIdOf(plan.members[limit.peer])];
      if (!limit.chunks.empty()) taken = ChunksIn(plan, limit.chunks);
    }
    role.on_chunk_shared = join.on_chunk_shared;
    role.upload_slots = m.upload_slots;
    if (striped) {
      role.stripe = StripeOf(plan, m);
      role.source = endpoints[swarm.source];
    }
    role.push_first = plan.HasLanes();  // hybrid: the push lanes bring most chunks
    role.looks_first = join.looks_first;
  }
  const PayloadIdentity& identity = join.store->identity();
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<lt::torrent_info> info,
                            PlanTorrent(join.plan_id, identity.size_bytes, identity.chunk_bytes));
  return impl_->Add(std::move(info), std::move(join.store), std::move(role));
}

Status TorrentSession::CheckPeerAddress(const std::string& address) { return Endpoint(address).status(); }

Result<std::shared_ptr<ClientServe>> TorrentSession::ServeTo(const std::string& torrent,
                                                             std::shared_ptr<PayloadStore> store,
                                                             const std::string& address) {
  GRIDCAST_ASSIGN_OR_RETURN(lt::tcp::endpoint client, Endpoint(address));
  if (!store->Complete()) return Status::FailedPrecondition("only a complete payload can be served");
  const uint64_t payload_bytes = store->identity().size_bytes;
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<lt::torrent_info> info,
                            ParsePayloadTorrent(torrent, payload_bytes, store->identity().chunk_bytes));
  std::shared_ptr<ClientTracker> tracker = MakeClientTracker(store->identity(), client);
  Impl::Role role;
  role.peers = {client};
  role.on_chunk_verified = [](bool) {};
  role.extension = ClientPlugin(tracker);
  GRIDCAST_ASSIGN_OR_RETURN(std::shared_ptr<PullSwarm> swarm, impl_->Add(std::move(info), std::move(store), std::move(role)));
  swarm->Start();
  return MakeServedClient(std::move(swarm), std::move(tracker), payload_bytes);
}

}  // namespace gridcast
