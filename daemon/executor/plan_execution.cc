#include "daemon/executor/plan_execution.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <set>

#include "common/hex.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

namespace asio = boost::asio;

struct PlanExecution::SenderConnection {
  SenderConnection(asio::io_context& io, ConnectionPtr c, int lane_index, int child_index)
      : connection(std::move(c)), lane(lane_index), child(child_index), wake(io) {}
  const ConnectionPtr connection;
  const int lane;
  const int child;
  std::vector<bool> child_has;
  std::set<uint64_t> in_flight;
  std::deque<uint64_t> resend;
  Notifier wake;
  Status error;
  std::chrono::steady_clock::time_point last_ack = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_sent = std::chrono::steady_clock::now();
  // The lane's log position this connection is to hand over next (every stream_count-th).
  uint64_t next_position = 0;
  int stream_count = 1;
  PeerTraffic* traffic = nullptr;        // the daemon's counters of bytes to this child, if any
  std::vector<bool>* sent_before = nullptr;  // PlanExecution::sent_ of this edge
};

struct PlanExecution::ReceiverConnection {
  ReceiverConnection(asio::io_context& io, ConnectionPtr c, int lane_index)
      : connection(std::move(c)), lane(lane_index), changed(io) {}
  const ConnectionPtr connection;
  const int lane;
  std::chrono::steady_clock::time_point last_written = std::chrono::steady_clock::now();
  std::string where;            // for log lines
  std::deque<FrameHeader> replies;  // ACKs and NACKs not written yet
  uint32_t verifying = 0;       // chunks with the workers
  int mismatches = 0;
  bool closed = false;
  Notifier changed;             // a reply was queued, a chunk left the workers, or closed
  void Close() {
    closed = true;
    connection->Close();
    changed.Notify();
  }
};

namespace {
// Shared lanes: chunks that may wait at a member for one connection's window before the member
// holds its acknowledgements back (one arriving while the window drains is no lag).
constexpr uint64_t kLaneSlackChunks = 1;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

PlanExecution::PlanExecution(asio::io_context& io, asio::thread_pool& workers, Plan plan, PlanId id,
                             int self, std::vector<std::string> data_addresses,
                             std::shared_ptr<PayloadStore> store, ExecutionOptions options)
    : io_(io),
      workers_(workers),
      plan_(std::move(plan)),
      id_(id),
      self_(self),
      data_addresses_(std::move(data_addresses)),
      store_(std::move(store)),
      options_(std::move(options)),
      buffers_(BufferPool::Create(options_.cache_chunks)),
      chunk_arrived_(io),
      hashed_together_(HashesBestTogether(store_->identity().digest)),
      window_chunks_(plan_.window_chunks > 0 ? std::min<uint32_t>(options_.window_chunks, plan_.window_chunks)
                                             : options_.window_chunks) {
  sends_left_.assign(plan_.NumChunks(), 0);
  logged_in_.assign(plan_.NumChunks(), -1);
  lane_log_.resize(plan_.lanes.size());
  lane_senders_.resize(plan_.lanes.size());
  for (const Lane& lane : plan_.lanes) {
    uint32_t children = 0;
    for (const Fanout& fanout : lane.fanouts) {
      if (fanout.parent == self_) children += static_cast<uint32_t>(fanout.children.size());
    }
    lane_children_.push_back(children);
    parent_.push_back(lane.ParentOf(self_));
  }
  if (!plan_.shared_chunks) {
    for (size_t l = 0; l < plan_.lanes.size(); ++l) {
      std::vector<uint64_t> chunks;
      for (const ChunkRange& range : plan_.lanes[l].chunks) {
        for (uint64_t c = range.begin; c < range.end; c += range.step) chunks.push_back(c);
      }
      std::sort(chunks.begin(), chunks.end());
      for (uint64_t c : chunks) Log(static_cast<int>(l), c);
    }
  }
  lane_last_chunk_s_.assign(plan_.lanes.size(), 0);
  store_->SetPageCacheWindow(options_.page_cache_window_bytes);
}

bool PlanExecution::Stopping() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_requested_ || state_ == ExecutionState::kFailed;
}

void PlanExecution::Start(std::chrono::steady_clock::time_point source_started) {
  started_ = source_started;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == ExecutionState::kPrepared) state_ = ExecutionState::kRunning;
  }
  for (size_t l = 0; l < plan_.lanes.size(); ++l) {
    const Lane& lane = plan_.lanes[l];
    for (const Fanout& fanout : lane.fanouts) {
      if (fanout.parent != self_) continue;
      for (size_t i = 0; i < fanout.children.size(); ++i) {
        const int streams = lane.StreamsOn(fanout, i);
        for (int s = 0; s < streams; ++s) {
          ++senders_running_;
          Spawn(RunSender(static_cast<int>(l), fanout.children[i], s, streams));
        }
      }
    }
  }
  if (senders_running_ == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    forwarding_done_ = true;
  }
  if (swarm_) swarm_->Start();
  if (swarm_ && plan_.HasLanes()) {  // hybrid: the swarm repairs stalled lanes
    // A lane's first chunk may take a while (connections open level by level as Start travels
    // down the tree): it gets a longer grace before the lane counts as stalled.
    lane_progress_.assign(plan_.lanes.size(), std::chrono::steady_clock::now() + 2 * options_.repair_stall);
    parent_trouble_.assign(plan_.lanes.size(), ParentTrouble::kNone);
    lane_repaired_.assign(plan_.lanes.size(), false);
    Spawn(WatchLanes());
  }
  if (store_->filling() && !store_->Complete()) FollowFill(std::chrono::milliseconds(1));
  OnChunkVerified();  // a member that already holds everything is done at once
}

void PlanExecution::FollowFill(std::chrono::milliseconds pause) {
  auto self = shared_from_this();
  asio::post(workers_, [self, pause] {
    Result<uint64_t> newly = self->store_->VerifyFilled();
    asio::post(self->io_, [self, pause, newly = std::move(newly)] {
      if (!newly.ok()) return self->Fail(newly.status().WithContext("the payload its sender writes"));
      if (*newly > 0) self->OnChunkVerified();
      if (self->Stopping() || self->store_->Complete()) return;
      const auto next = *newly > 0 ? std::chrono::milliseconds(1) : std::min(2 * pause, std::chrono::milliseconds(50));
      auto timer = std::make_shared<asio::steady_timer>(self->io_, next);
      timer->async_wait([self, timer, next](const boost::system::error_code&) { self->FollowFill(next); });
    });
  });
}

void PlanExecution::Spawn(asio::awaitable<void> task) {
  // The lambda lives as long as the task, and with it an owner of this object: a task may
  // start after the last other owner let go, so taking an owner inside it would be too late.
  asio::co_spawn(io_, [self = shared_from_this(), task = std::move(task)]() mutable { return std::move(task); },
                 asio::detached);
}

asio::awaitable<void> PlanExecution::WatchLanes() {
  asio::steady_timer tick(io_);
  const auto period = std::max(options_.repair_stall / 4, std::chrono::milliseconds(50));
  while (!Stopping() && !store_->Complete()) {
    tick.expires_after(period);
    boost::system::error_code ec;
    co_await tick.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    const auto now = std::chrono::steady_clock::now();
    auto missing_of = [this](size_t lane) {
      std::vector<uint64_t> missing;
      for (uint64_t c : lane_log_[lane]) {
        if (!store_->Has(c)) missing.push_back(c);
      }
      return missing;
    };
    // Endgame: once the swarm delivered every chunk it was asked for, the lanes still pushing
    // (slowly: their parents share their upload with the swarm) finish through it too.
    bool repairing = false, swarm_idle = true;
    for (size_t l = 0; l < plan_.lanes.size(); ++l) {
      if (!lane_repaired_[l]) continue;
      repairing = true;
      swarm_idle = swarm_idle && missing_of(l).empty();
    }
    const bool endgame = repairing && swarm_idle;
    for (size_t l = 0; l < plan_.lanes.size(); ++l) {
      if (parent_[l] < 0 || lane_repaired_[l]) continue;
      const ParentTrouble trouble = parent_trouble_[l];
      if (!endgame && trouble == ParentTrouble::kNone && now - lane_progress_[l] < options_.repair_stall) continue;
      std::vector<uint64_t> missing = missing_of(l);
      if (missing.empty()) continue;
      spdlog::warn("plan {} lane {}: parent {} {}; pulling its {} missing chunks from the swarm", ToHex(id_), l,
                   plan_.members[parent_[l]],
                   trouble == ParentTrouble::kGone        ? "is gone"
                   : trouble == ParentTrouble::kRepairing ? "pulls this lane itself"
                   : endgame                              ? "is slower than the idle swarm"
                                                          : "is silent",
                   missing.size());
      lane_repaired_[l] = true;
      swarm_->Fetch(missing);
    }
  }
}

std::chrono::milliseconds PlanExecution::KeepaliveInterval() const {
  return std::clamp(options_.repair_stall / 4, std::chrono::milliseconds(50), options_.io_timeout / 4);
}

void PlanExecution::MarkLaneProgress(int lane) {
  if (!lane_progress_.empty()) lane_progress_[lane] = std::chrono::steady_clock::now();
}

void PlanExecution::OnSwarmChunkVerified(bool newly) {
  if (newly && options_.counters) options_.counters->ChunkVerified(Transport::kBitTorrent);
  asio::post(io_, [self = shared_from_this()] { self->OnChunkVerified(); });
}

void PlanExecution::RequestStop(std::string reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_requested_) return;
    stop_requested_ = true;
    if (state_ == ExecutionState::kPrepared || state_ == ExecutionState::kRunning) {
      state_ = ExecutionState::kStopped;
      error_ = std::move(reason);
      CountEnd(PlanOutcome::kStopped);
    }
  }
  if (swarm_) swarm_->Leave();
  auto self = shared_from_this();
  asio::post(io_, [self] {
    for (const ConnectionPtr& connection : self->open_connections_) connection->Close();
    self->open_connections_.clear();
    self->chunk_arrived_.Notify();
  });
}

void PlanExecution::Fail(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == ExecutionState::kFailed) return;
    if (state_ == ExecutionState::kPrepared || state_ == ExecutionState::kRunning) CountEnd(PlanOutcome::kFailed);
    state_ = ExecutionState::kFailed;
    error_ = status.message();
  }
  spdlog::error("plan {}: {}", ToHex(id_), status.ToString());
  if (swarm_) swarm_->Leave();
  for (const ConnectionPtr& connection : open_connections_) connection->Close();
  open_connections_.clear();
  chunk_arrived_.Notify();
}

void PlanExecution::CountEnd(PlanOutcome outcome) const {
  if (options_.counters) options_.counters->PlanEnded(plan_.mode, outcome);
}

PeerTraffic* PlanExecution::PushTrafficWith(int member) const {
  return options_.counters ? &options_.counters->Peer(plan_.members[member], Transport::kPush) : nullptr;
}

void PlanExecution::NotePayloadSent() {
  if (first_payload_sent_ns_.load(std::memory_order_relaxed) != 0) return;
  int64_t none = 0;
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  first_payload_sent_ns_.compare_exchange_strong(none, now);
}

ExecutionSnapshot PlanExecution::Snapshot() const {
  ExecutionSnapshot snapshot;
  snapshot.chunks_done = store_->VerifiedCount();
  snapshot.chunks_total = store_->identity().NumChunks();
  snapshot.bytes_done = std::min(snapshot.chunks_done * plan_.chunk_bytes, plan_.payload_bytes);
  snapshot.pushed_sent_bytes = pushed_sent_bytes_.load(std::memory_order_relaxed);
  snapshot.pushed_received_bytes = pushed_received_bytes_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot.state = state_;
  snapshot.error = error_;
  snapshot.digest = digest_;
  snapshot.finished_s = finished_s_;
  snapshot.forwarding_done = forwarding_done_;
  if (const int64_t sent = first_payload_sent_ns_.load(); sent != 0) {
    snapshot.first_payload_sent = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(sent));
  }
  return snapshot;
}

std::vector<uint8_t> PlanExecution::HeldBitmap() const { return store_->BitmapBytes(); }

Status PlanExecution::CheckParent(const Hello& hello) const {
  if (hello.lane >= plan_.lanes.size()) {
    return Status::InvalidArgument("lane " + std::to_string(hello.lane) + " is not in the plan");
  }
  const int parent = parent_[hello.lane];
  if (parent < 0 || static_cast<uint32_t>(parent) != hello.parent) {
    return Status::PermissionDenied("member " + std::to_string(hello.parent) +
                                    " is not this member's parent in lane " + std::to_string(hello.lane));
  }
  const Lane& lane = plan_.lanes[hello.lane];
  for (const Fanout& fanout : lane.fanouts) {
    if (fanout.parent != parent) continue;
    for (size_t i = 0; i < fanout.children.size(); ++i) {
      if (fanout.children[i] == self_ &&
          static_cast<uint32_t>(lane.StreamsOn(fanout, i)) != hello.stream_count) {
        return Status::InvalidArgument("the plan has " + std::to_string(lane.StreamsOn(fanout, i)) +
                                       " streams on this edge, not " + std::to_string(hello.stream_count));
      }
    }
  }
  return Status::Ok();
}

bool PlanExecution::StreamCarries(int lane, uint64_t chunk, int stream, int stream_count) const {
  const std::vector<uint64_t>& chunks = lane_log_[lane];
  auto it = std::lower_bound(chunks.begin(), chunks.end(), chunk);
  if (it == chunks.end() || *it != chunk) return false;
  return static_cast<int>((it - chunks.begin()) % stream_count) == stream;
}

void PlanExecution::Log(int lane, uint64_t chunk) {
  if (logged_in_[chunk] >= 0) return;
  logged_in_[chunk] = static_cast<int16_t>(lane);
  ++logged_count_;
  lane_log_[lane].push_back(chunk);
  sends_left_[chunk] += lane_children_[lane];
  chunk_arrived_.Notify();
}

bool PlanExecution::ClaimChunk(int lane) {
  if (!plan_.shared_chunks || parent_[lane] >= 0 || next_unclaimed_ >= logged_in_.size()) return false;
  const uint64_t logged = lane_log_[lane].size();
  for (const SenderConnection* conn : lane_senders_[lane]) {
    if (conn->next_position < logged) return false;
  }
  Log(lane, next_unclaimed_++);
  return true;
}

bool PlanExecution::LaneLags(int lane) const {
  const uint64_t logged = lane_log_[lane].size();
  for (const SenderConnection* conn : lane_senders_[lane]) {
    if (conn->next_position >= logged) continue;
    const uint64_t waiting = (logged - 1 - conn->next_position) / conn->stream_count + 1;
    if (waiting > kLaneSlackChunks) return true;
  }
  return false;
}

void PlanExecution::Delivered(int lane, int child, uint64_t chunk) {
  std::vector<bool>& held = delivered_[{lane, child}];
  if (held.empty()) held.resize(plan_.NumChunks());
  if (held[chunk]) return;
  held[chunk] = true;
  if (--sends_left_[chunk] == 0 && store_->Has(chunk)) ReleaseFromPageCache(chunk);
}

void PlanExecution::ReleaseFromPageCache(uint64_t chunk) {
  if (store_->rank_memory() != nullptr) return store_->ChunkForwarded(chunk);  // never blocks
  if (options_.page_cache_window_bytes == 0) return;
  asio::post(workers_, [store = store_, chunk] { store->ChunkForwarded(chunk); });
}

void PlanExecution::OnChunkVerified() {
  chunk_arrived_.Notify();
  if (!store_->Complete() || finalizing_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != ExecutionState::kRunning) return;
  }
  // Syncing the payload may take a while: off the io thread, so this member keeps forwarding
  // the last chunks to its children meanwhile.
  finalizing_ = true;
  auto self = shared_from_this();
  asio::post(workers_, [self] {
    Result<Digest> digest = self->store_->Finalize(self->options_.sync_on_finish);
    if (digest.ok() && self->after_finalize_) {
      if (Status step = self->after_finalize_(); !step.ok()) digest = step;
    }
    asio::post(self->io_, [self, digest = std::move(digest)]() mutable { self->OnFinalized(std::move(digest)); });
  });
}

void PlanExecution::OnFinalized(Result<Digest> digest) {
  if (!digest.ok()) {
    Fail(digest.status());
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != ExecutionState::kRunning) return;
  state_ = ExecutionState::kDone;
  CountEnd(PlanOutcome::kFinished);
  digest_ = *digest;
  finished_s_ = SecondsSince(started_);
  if (parent_.size() > 1 && std::any_of(parent_.begin(), parent_.end(), [](int p) { return p >= 0; })) {
    spdlog::info("plan {}: done at {:.3f} s; each lane's last chunk pushed here at [{:.3f}] s", ToHex(id_), finished_s_,
                 fmt::join(lane_last_chunk_s_, ", "));
  }
}

void PlanExecution::Track(const ConnectionPtr& connection) {
  // A connection made (or handed over by a handshake begun) before a stop would outlive the
  // stop's closing of the tracked ones: close it at once.
  if (Stopping()) {
    connection->Close();
    return;
  }
  std::erase_if(open_connections_, [](const ConnectionPtr& c) { return !c->IsOpen(); });
  open_connections_.push_back(connection);
}

void PlanExecution::SenderFinished() {
  if (--senders_running_ == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    forwarding_done_ = true;
  }
}

asio::awaitable<void> PlanExecution::RunSender(int lane, int child, int stream, int stream_count) {
  while (!Stopping()) {
    Status status = co_await SendOnce(lane, child, stream, stream_count);
    if (status.ok()) break;
    // A wrong secret or certificate, or a child of another data protocol version, does not
    // heal by reconnecting: fail, naming the child.
    if (status.code() == StatusCode::kUnauthenticated || status.code() == StatusCode::kFailedPrecondition) {
      Fail(status);
      break;
    }
    if (!Stopping()) {
      spdlog::debug("plan {} lane {} -> {} stream {}: {}; reconnecting", ToHex(id_), lane,
                    plan_.members[child], stream, status.ToString());
      asio::steady_timer delay(io_, options_.reconnect_delay);
      boost::system::error_code ec;
      co_await delay.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }
  SenderFinished();
}

asio::awaitable<Status> PlanExecution::SendChunk(SenderConnection& conn, uint64_t chunk) {
  FrameHeader header;
  header.type = FrameType::kData;
  header.plan_id = id_;
  header.lane = static_cast<uint32_t>(conn.lane);
  header.length = static_cast<uint32_t>(store_->identity().ChunkSize(chunk));
  header.chunk = chunk;
  header.digest = store_->identity().digest;
  header.hash = store_->identity().chunk_hashes[chunk];
  const auto header_bytes = EncodeFrameHeader(header);
  // The acknowledgement timeout counts from the oldest chunk unacknowledged, not from an ACK
  // that came before the connection idled.
  if (conn.in_flight.empty()) conn.last_ack = std::chrono::steady_clock::now();
  conn.in_flight.insert(chunk);
  conn.last_sent = std::chrono::steady_clock::now();
  NotePayloadSent();
  if ((*conn.sent_before)[chunk] && options_.counters) options_.counters->ChunkResent();
  (*conn.sent_before)[chunk] = true;
  Result<ChunkRef> bytes = store_->ChunkAt(chunk);
  if (!bytes.ok()) co_return bytes.status();
  GRIDCAST_CO_RETURN_IF_ERROR(co_await conn.connection->SendChunk(header_bytes, std::move(*bytes), options_.io_timeout));
  pushed_sent_bytes_.fetch_add(header.length, std::memory_order_relaxed);
  if (conn.traffic != nullptr) conn.traffic->sent_bytes.fetch_add(header.length, std::memory_order_relaxed);
  co_return Status::Ok();
}

asio::awaitable<Status> PlanExecution::SendHeader(SenderConnection& conn, FrameType type, uint64_t chunk) {
  FrameHeader header;
  header.type = type;
  header.plan_id = id_;
  header.lane = static_cast<uint32_t>(conn.lane);
  header.chunk = chunk;
  const auto header_bytes = EncodeFrameHeader(header);
  conn.last_sent = std::chrono::steady_clock::now();
  co_return co_await conn.connection->Write(header_bytes, {}, options_.io_timeout);
}

asio::awaitable<Status> PlanExecution::WaitUntil(SenderConnection& conn, const std::function<bool()>& ready) {
  const auto keepalive_every = KeepaliveInterval();
  while (!ready()) {
    if (Stopping()) co_return Status::Cancelled("stopped");
    if (!conn.error.ok()) co_return conn.error;
    if (std::chrono::steady_clock::now() - conn.last_sent >= keepalive_every) {
      const bool repairs = !lane_repaired_.empty() && lane_repaired_[conn.lane];
      GRIDCAST_CO_RETURN_IF_ERROR(co_await SendHeader(conn, FrameType::kKeepalive, repairs ? kKeepaliveParentRepairs : 0));
    }
    co_await chunk_arrived_.Wait(keepalive_every);
  }
  co_return Status::Ok();
}

asio::awaitable<Status> PlanExecution::WaitForWindow(SenderConnection& conn) {
  for (;;) {
    if (Stopping()) co_return Status::Cancelled("stopped");
    if (!conn.error.ok()) co_return conn.error;
    if (!conn.resend.empty()) {
      const uint64_t chunk = conn.resend.front();
      conn.resend.pop_front();
      GRIDCAST_CO_RETURN_IF_ERROR(co_await SendChunk(conn, chunk));
      continue;
    }
    if (conn.in_flight.size() < window_chunks_) co_return Status::Ok();
    if (std::chrono::steady_clock::now() - conn.last_ack > options_.io_timeout) {
      co_return Status::DeadlineExceeded("no acknowledgement within the I/O timeout");
    }
    co_await conn.wake.Wait();
  }
}

// One connection to a child, from the dial to its last acknowledgement, in the order it happens.
asio::awaitable<Status> PlanExecution::SendOnce(int lane, int child, int stream, int stream_count) {
  Result<ConnectionPtr> connected = co_await options_.transport->Connect(data_addresses_[child], options_.connect_timeout);
  if (!connected.ok()) co_return connected.status().WithContext("child " + plan_.members[child]);
  auto conn = std::make_shared<SenderConnection>(io_, std::move(*connected), lane, child);
  Track(conn->connection);

  Hello hello;
  hello.plan_id = id_;
  hello.lane = static_cast<uint32_t>(lane);
  hello.parent = static_cast<uint32_t>(self_);
  hello.stream = static_cast<uint32_t>(stream);
  hello.stream_count = static_cast<uint32_t>(stream_count);
  Result<std::vector<bool>> child_has =
      co_await HandshakeAsParent(conn->connection, options_.secret, hello, plan_.NumChunks(), options_.io_timeout);
  if (!child_has.ok()) co_return child_has.status().WithContext("child " + plan_.members[child]);
  conn->child_has = std::move(*child_has);

  Spawn(ReadAcks(conn));
  // Listed while open: a lane's source claims chunks at the pace of its connections, and a
  // member holds acknowledgements while one of them lags (ClaimChunk, LaneLags).
  conn->stream_count = stream_count;
  struct Listed {
    std::shared_ptr<PlanExecution> self;
    SenderConnection* conn;
    ~Listed() {
      std::erase(self->lane_senders_[conn->lane], conn);
      self->chunk_arrived_.Notify();
    }
  } listed{shared_from_this(), conn.get()};
  lane_senders_[lane].push_back(conn.get());

  conn->traffic = PushTrafficWith(child);
  conn->sent_before = &sent_[{lane, child}];
  if (conn->sent_before->empty()) conn->sent_before->resize(plan_.NumChunks());

  const std::vector<uint64_t>& log = lane_log_[lane];
  for (uint64_t position = stream;; position += stream_count) {
    conn->next_position = position;
    if (plan_.shared_chunks) chunk_arrived_.Notify();
    // A claim may log a position of another stream of this lane (one not connected yet).
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitUntil(*conn, [&] {
      while (position >= log.size() && ClaimChunk(lane)) {
      }
      return position < log.size() || EveryChunkLogged();
    }));
    if (position >= log.size()) break;  // every chunk is logged: the lane is complete here
    const uint64_t chunk = log[position];
    if (conn->child_has[chunk]) {
      Delivered(lane, child, chunk);
      if (plan_.shared_chunks) GRIDCAST_CO_RETURN_IF_ERROR(co_await SendHeader(*conn, FrameType::kAssign, chunk));
      continue;
    }
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitUntil(*conn, [&] { return store_->Has(chunk); }));
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitForWindow(*conn));
    GRIDCAST_CO_RETURN_IF_ERROR(co_await SendChunk(*conn, chunk));
  }
  // Drain: every chunk acknowledged (or resent until it is).
  while (!conn->in_flight.empty() || !conn->resend.empty()) {
    GRIDCAST_CO_RETURN_IF_ERROR(co_await WaitForWindow(*conn));
    if (!conn->in_flight.empty()) co_await conn->wake.Wait();
  }
  conn->connection->Close();
  co_return Status::Ok();
}

asio::awaitable<void> PlanExecution::ReadAcks(std::shared_ptr<SenderConnection> conn) {
  std::array<uint8_t, kFrameHeaderBytes> bytes{};
  for (;;) {
    Status read = co_await conn->connection->Read(bytes, std::chrono::hours(24 * 365));
    Result<FrameHeader> header = read.ok() ? DecodeFrameHeader(bytes, 0) : Result<FrameHeader>(read);
    const bool answer = header.ok() && (header->type == FrameType::kAck || header->type == FrameType::kNack);
    if (header.ok() && (!answer || header->plan_id != id_ || !conn->in_flight.count(header->chunk))) {
      header = Status::InvalidArgument("unexpected frame from child");
    }
    if (!header.ok()) {
      conn->error = header.status();
      conn->connection->Close();
      conn->wake.Notify();
      co_return;
    }
    conn->in_flight.erase(header->chunk);
    conn->last_ack = std::chrono::steady_clock::now();
    if (header->type == FrameType::kAck) {
      conn->child_has[header->chunk] = true;
      Delivered(conn->lane, conn->child, header->chunk);
    } else {
      spdlog::warn("plan {}: child refused chunk {} (hash mismatch); resending", ToHex(id_), header->chunk);
      conn->resend.push_back(header->chunk);
    }
    conn->wake.Notify();
  }
}

void PlanExecution::AdoptParentConnection(ConnectionPtr connection, const Hello& hello) {
  Spawn(RunReceiver(std::move(connection), static_cast<int>(hello.lane), static_cast<int>(hello.stream),
                    static_cast<int>(hello.stream_count)));
}

// Stays whole: one connection from a parent, from the handshake to the last chunk stored, as one
// coroutine in the order it happens.
asio::awaitable<void> PlanExecution::RunReceiver(ConnectionPtr connection_ptr, int lane, int stream,
                                                 int stream_count) {
  auto conn = std::make_shared<ReceiverConnection>(io_, std::move(connection_ptr), lane);
  const ConnectionPtr& connection = conn->connection;
  Track(connection);
  conn->where = "plan " + ToHex(id_) + " lane " + std::to_string(lane);
  Spawn(WriteReplies(conn));
  PeerTraffic* const traffic = PushTrafficWith(parent_[lane]);
  std::array<uint8_t, kFrameHeaderBytes> bytes{};
  while (!conn->closed) {
    Status read = co_await connection->Read(bytes, options_.io_timeout);
    if (!read.ok()) {
      if (!Stopping() && !store_->Complete()) {
        spdlog::debug("{}: parent connection ended: {}", conn->where, read.ToString());
        if (!parent_trouble_.empty()) parent_trouble_[lane] = ParentTrouble::kGone;
      }
      break;
    }
    Result<FrameHeader> header = DecodeFrameHeader(bytes, static_cast<uint32_t>(plan_.chunk_bytes));
    Status valid = header.status();
    if (valid.ok()) {
      const bool assign = header->type == FrameType::kAssign;
      if ((header->type != FrameType::kData && header->type != FrameType::kKeepalive && !assign) ||
          header->plan_id != id_ || header->lane != static_cast<uint32_t>(lane) ||
          (assign && !plan_.shared_chunks)) {
        valid = Status::InvalidArgument("frame for another plan, lane or of the wrong type");
      } else if (header->type == FrameType::kKeepalive) {
        if (header->chunk > kKeepaliveParentRepairs) valid = Status::InvalidArgument("malformed keepalive");
      } else if (header->chunk >= plan_.NumChunks() ||
                 (plan_.shared_chunks ? logged_in_[header->chunk] >= 0 && logged_in_[header->chunk] != lane
                                      : !StreamCarries(lane, header->chunk, stream, stream_count))) {
        valid = Status::InvalidArgument("chunk " + std::to_string(header->chunk) + " is not carried here");
      } else if (assign) {
        if (!store_->Has(header->chunk)) {
          valid = Status::InvalidArgument("chunk " + std::to_string(header->chunk) +
                                          " is assigned to this member as held, and it is not");
        }
      } else if (header->length != plan_.ChunkSize(header->chunk)) {
        valid = Status::InvalidArgument("chunk " + std::to_string(header->chunk) + " has the wrong length");
      } else if (header->digest != store_->identity().digest ||
                 header->hash != store_->identity().chunk_hashes[header->chunk]) {
        valid = Status::InvalidArgument("chunk " + std::to_string(header->chunk) +
                                        " comes with another digest than the plan's");
      }
    }
    if (!valid.ok()) {
      spdlog::warn("{}: closing parent connection: {}", conn->where, valid.message());
      break;
    }
    MarkLaneProgress(lane);
    if (header->type == FrameType::kKeepalive) {
      // The parent pulls this lane itself: its whole subtree is cut off, so pull too (the
      // swarm spreads the missing chunks faster than one repairer forwarding them down).
      if (header->chunk == kKeepaliveParentRepairs && !parent_trouble_.empty() &&
          parent_trouble_[lane] == ParentTrouble::kNone) {
        parent_trouble_[lane] = ParentTrouble::kRepairing;
      }
      continue;
    }
    if (header->type == FrameType::kAssign) {
      Log(lane, header->chunk);
      continue;
    }
    // Straight into the payload's final pages where the store has them (in memory), else
    // into a pooled buffer that the store writes once verified.
    const std::span<uint8_t> place = store_->ClaimPlace(header->chunk);
    std::shared_ptr<std::vector<uint8_t>> data;
    std::span<uint8_t> into = place;
    if (place.empty()) {
      data = buffers_->Acquire(header->length);
      into = *data;
    }
    // Progress as parts arrive: a parent sending slowly (its upload shared) is not a silent one.
    std::function<void()> progress = [this, lane] { MarkLaneProgress(lane); };
    const Status received = co_await connection->ReceiveChunk(into, options_.io_timeout, std::move(progress));
    if (received.ok()) {
      pushed_received_bytes_.fetch_add(header->length, std::memory_order_relaxed);
      if (traffic != nullptr) traffic->received_bytes.fetch_add(header->length, std::memory_order_relaxed);
      // A parent keeps at most its window of chunks unacknowledged; one that sends more waits
      // here, so this connection never holds more than a window of buffers.
      while (conn->verifying >= window_chunks_ && !conn->closed) co_await conn->changed.Wait();
    }
    if (!received.ok() || conn->closed) {
      if (!place.empty()) store_->ReleasePlace(header->chunk);
      break;
    }
    ++conn->verifying;
    if (!place.empty() && HashesFasterThanAHandoff(store_->identity().digest)) {
      bool newly = false;
      const Status verified = store_->VerifyInPlace(header->chunk, &newly);
      OnChunkStored(conn, *header, nullptr, verified, newly);
      continue;
    }
    // Into lent memory the store's write is one copy, as receiving into place is: here too.
    if (store_->rank_memory() != nullptr && HashesFasterThanAHandoff(store_->identity().digest)) {
      PayloadStore::ReceivedChunk chunk;
      chunk.chunk = header->chunk;
      chunk.data = *data;
      chunk.buffer = data;
      store_->StoreReceived({&chunk, 1});
      OnChunkStored(conn, *header, std::move(data), chunk.status, chunk.newly_verified);
      continue;
    }
    StoreOnWorkers({conn, *header, std::move(data)});
  }
  conn->Close();
}

void PlanExecution::StoreOnWorkers(WaitingChunk waiting) {
  bool start = true;
  {
    std::lock_guard<std::mutex> lock(waiting_mutex_);
    waiting_.push_back(std::move(waiting));
    if (hashed_together_) {
      start = !draining_;
      draining_ = true;
    }
  }
  if (start) asio::post(workers_, [self = shared_from_this()] { self->StoreWaitingChunks(); });
}

void PlanExecution::StoreWaitingChunks() {
  for (;;) {
    std::vector<WaitingChunk> batch;
    {
      std::lock_guard<std::mutex> lock(waiting_mutex_);
      while (!waiting_.empty() && batch.size() < kChunksHashedTogether) {
        batch.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
      }
      if (batch.empty()) {
        draining_ = false;
        return;
      }
    }
    std::vector<PayloadStore::ReceivedChunk> received;
    for (const WaitingChunk& waiting : batch) {
      PayloadStore::ReceivedChunk chunk;
      chunk.chunk = waiting.header.chunk;
      chunk.in_place = waiting.data == nullptr;
      if (waiting.data) chunk.data = *waiting.data;
      chunk.buffer = waiting.data;
      received.push_back(std::move(chunk));
    }
    store_->StoreReceived(received);
    asio::post(io_, [self = shared_from_this(), batch = std::move(batch), received = std::move(received)]() mutable {
      for (size_t i = 0; i < batch.size(); ++i) {
        self->OnChunkStored(batch[i].conn, batch[i].header, std::move(batch[i].data), received[i].status,
                            received[i].newly_verified);
      }
    });
    // Chunks hashed one by one go to as many workers as there are; those hashed together stay
    // with this one, so that the next batch fills while it hashes.
    if (!hashed_together_) return;
  }
}

void PlanExecution::OnChunkStored(const std::shared_ptr<ReceiverConnection>& conn, const FrameHeader& header,
                                  std::shared_ptr<std::vector<uint8_t>> data, const Status& written, bool newly) {
  constexpr int kMaxMismatches = 8;
  --conn->verifying;
  conn->changed.Notify();  // the waiters run after this handler, and see the reply queued below
  FrameHeader reply;
  reply.plan_id = id_;
  reply.lane = header.lane;
  reply.chunk = header.chunk;
  reply.type = FrameType::kAck;
  if (written.code() == StatusCode::kAborted) {
    // Another connection of this lane receives the chunk into place (a reconnect overtook
    // a connection still ending): ask again; the parent resends unless that one delivers it.
    reply.type = FrameType::kNack;
  } else if (written.code() == StatusCode::kDataLoss) {
    spdlog::warn("{}: {}; asking the parent again", conn->where, written.message());
    reply.type = FrameType::kNack;
    if (options_.counters) options_.counters->ChunkRefused(Transport::kPush);
    if (++conn->mismatches > kMaxMismatches) {
      spdlog::warn("{}: {} corrupt chunks from this parent; closing", conn->where, conn->mismatches);
      conn->Close();
      return;
    }
  } else if (!written.ok()) {
    Fail(written.WithContext(plan_.members[self_]));
    return;
  } else {
    if (newly && options_.counters) options_.counters->ChunkVerified(Transport::kPush);
    if (newly) lane_last_chunk_s_[header.lane] = SecondsSince(started_);
    if (swarm_ && data) swarm_->ChunkVerifiedByPush(header.chunk, *data);
    if (plan_.shared_chunks) Log(static_cast<int>(header.lane), header.chunk);
    if (sends_left_[header.chunk] == 0) ReleaseFromPageCache(header.chunk);
    OnChunkVerified();
  }
  if (conn->closed) return;
  conn->replies.push_back(reply);
}

asio::awaitable<void> PlanExecution::WriteReplies(std::shared_ptr<ReceiverConnection> conn) {
  std::vector<uint8_t> bytes;
  while (!conn->closed) {
    if (conn->replies.empty()) {
      co_await conn->changed.Wait();
      continue;
    }
    // Shared lanes: while this member's children in the lane fall behind, the parent hears
    // nothing (its window fills, and the lag travels up to the source), up to half the time
    // after which it would give up on this connection.
    if (plan_.shared_chunks && LaneLags(conn->lane) &&
        std::chrono::steady_clock::now() - conn->last_written < options_.io_timeout / 2) {
      co_await chunk_arrived_.Wait();
      continue;
    }
    bytes.clear();
    for (const FrameHeader& reply : conn->replies) {
      const auto encoded = EncodeFrameHeader(reply);
      bytes.insert(bytes.end(), encoded.begin(), encoded.end());
    }
    conn->replies.clear();
    conn->last_written = std::chrono::steady_clock::now();
    if (!(co_await conn->connection->Write(bytes, {}, options_.io_timeout)).ok()) {
      conn->Close();
    }
  }
}

}  // namespace gridcast
