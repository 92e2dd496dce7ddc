#include "daemon/executor/plan_execution.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/hex.h"

namespace gridcast {

namespace asio = boost::asio;

namespace {
double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<int> ParentsOf(const LaneSchedule& schedule) {
  std::vector<int> parents;
  for (size_t l = 0; l < schedule.lanes(); ++l) parents.push_back(schedule.ParentOf(static_cast<int>(l)));
  return parents;
}

// Gone after three re-dial intervals without a connection (within --parent-silent, and not
// sooner than 100 ms). A lane's first chunk may take a while (connections open level by level as
// Start travels down the tree): no verdict before twice the longer of the watch's and the swarm
// repair's times. Slow is judged over three --parent-silent, very slow over 0.35 of one.
ParentWatchTimes WatchTimes(const ExecutionOptions& options) {
  const std::chrono::milliseconds gone =
      std::clamp(3 * options.reconnect_delay, std::chrono::milliseconds(100), options.parent_silent);
  return {options.parent_silent, gone, 2 * std::max(options.parent_silent, options.repair_stall),
          3 * options.parent_silent, options.parent_silent * 7 / 20};
}

// The rate a lane needs, in kernel-received bytes between two judgements, for a parent still
// reading out a part to count as sending: 128 kbit/s.
constexpr double kTrickleBytesPerSecond = 16384;

// What ParentWatch measures each lane's pace against; nothing where lanes share chunks (the
// source hands each chunk to the lane that drains first: their paces differ by design).
std::vector<uint64_t> LaneBytesOf(const Plan& plan) {
  std::vector<uint64_t> bytes;
  if (plan.shared_chunks) return bytes;
  for (int l = 0; l < static_cast<int>(plan.lanes.size()); ++l) bytes.push_back(plan.LaneBytes(l));
  return bytes;
}
}  // namespace

PlanExecution::PlanExecution(asio::io_context& io, asio::thread_pool& workers, Plan plan, PlanId id, int self,
                             std::vector<std::string> data_addresses, std::shared_ptr<PayloadStore> store,
                             ExecutionOptions options, std::unique_ptr<DigestStream> digests)
    : io_(io),
      workers_(workers),
      plan_(std::move(plan)),
      id_(id),
      names_(plan_.members),
      data_addresses_(std::move(data_addresses)),
      store_(std::move(store)),
      options_(std::move(options)),
      digests_(std::move(digests)),
      schedule_(plan_, self, store_->spill_dir()),
      chunk_arrived_(io),
      watch_(ParentsOf(schedule_), LaneBytesOf(plan_), WatchTimes(options_), plan_.chunk_bytes),
      context_{io_,
               workers_,
               plan_,
               id_,
               names_,
               data_addresses_,
               store_,
               store_->capabilities(),
               options_,
               static_cast<uint32_t>(ChunksWithin(plan_.window_chunks > 0
                                                      ? std::min<uint32_t>(options_.window_chunks, plan_.window_chunks)
                                                      : options_.window_chunks,
                                                  plan_.chunk_bytes)),
               schedule_,
               repair_,
               watch_,
               traffic_,
               chunk_arrived_,
               *this,
               digests_.get()},
      repair_(context_),
      judge_now_(io),
      intake_(context_) {
  lane_last_chunk_s_.assign(plan_.lanes.size(), 0);
  patch_version_ = plan_.patch_version;  // a member prepared again gets the patched slice
  if (context_.capabilities.streamed != nullptr && digests_ != nullptr) {
    sealing_ = std::make_unique<SourceSealing>(context_, [this] { OnChunkVerified(); });
  }
  // Digests that arrive during the broadcast say which chunks this member holds already.
  KnownChunks* const known = context_.capabilities.known;
  if (digests_ != nullptr && known != nullptr && known->Searches() && store_->identity().Streams()) {
    finds_held_later_ = true;
    digests_->OnNewBatch([this](uint64_t batch) { TakeKnownChunks(batch); });
  }
}

void PlanExecution::TakeKnownChunks(uint64_t batch) {
  OnWorkers([self = shared_from_this(), batch] {
    const DigestBatches::Range range = self->digests_->rule().RangeOf(batch);
    Result<DigestBatch> held = self->store_->digest_log()->Batch(batch);
    if (!held.ok()) return;
    KnownChunks::Taken taken = self->context_.capabilities.known->TakeKnownChunks(range.first, range.count, held->weak);
    if (const std::shared_ptr<DaemonCounters>& counters = self->options_.counters) {
      if (taken.resumed_chunks > 0) counters->ChunksResumed(taken.resumed_chunks);
      if (taken.reused_bytes > 0) counters->Reused(taken.reused_bytes);
    }
    if (self->swarm_ != nullptr) {
      // The swarm announces them as pieces this member has.
      std::vector<uint8_t> bytes;
      for (uint64_t chunk : taken.chunks) {
        bytes.resize(self->store_->identity().ChunkSize(chunk));
        if (self->store_->ReadChunk(chunk, bytes).ok()) self->swarm_->ChunkVerifiedByPush(chunk, bytes);
      }
    }
    self->OnIo([self, batch] {
      // The swarm may fetch what lies below every batch looked through.
      const uint64_t below = self->intake_.LookedThrough(batch);
      if (self->swarm_ != nullptr && below > 0) {
        const DigestBatches::Range last = self->digests_->rule().RangeOf(below - 1);
        self->swarm_->LookedThrough(last.first + last.count);
      }
      self->OnChunkVerified();
    });
  });
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
  senders_made_ = true;
  for (size_t l = 0; l < schedule_.lanes(); ++l) {
    for (const LaneSchedule::Edge& edge : schedule_.ChildrenOf(static_cast<int>(l))) AddSenders(static_cast<int>(l), edge);
  }
  if (digest_tree_ != nullptr) digest_tree_->Start();
  if (senders_.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    forwarding_done_ = true;
  }
  if (swarm_ && !Stopping()) swarm_->Start();
  // A member that looks for chunks it holds already fetches a chunk from the swarm only once
  // it looked through the chunk's batch (the swarm would fetch it meanwhile), or, when the
  // batches stop coming, after the I/O timeout.
  if (swarm_ && finds_held_later_) {
    auto timer = std::make_shared<asio::steady_timer>(io_, options_.io_timeout);
    timer->async_wait([weak = weak_from_this(), timer](const boost::system::error_code&) {
      if (const std::shared_ptr<PlanExecution> self = weak.lock()) self->swarm_->LookedThrough(self->plan_.NumChunks());
    });
  }
  if (std::any_of(senders_.begin(), senders_.end(), [this](const std::unique_ptr<LaneSender>& sender) {
        return SendCap(sender->lane(), sender->stream_count()) > 0;
      })) {
    Spawn(PaceLanes());
  }
  if (swarm_ && plan_.HasLanes()) repair_.Start(swarm_);  // hybrid: the swarm repairs stalled lanes
  if (schedule_.ReceivesAnyLane()) {
    watch_.Start(std::chrono::steady_clock::now());
    Spawn(WatchParents());
  }
  if (context_.capabilities.growing != nullptr && !store_->Complete()) FollowFill(std::chrono::milliseconds(1));
  if (sealing_ != nullptr) sealing_->Start();
  OnChunkVerified();  // a member that already holds everything is done at once
}

void PlanExecution::AddSenders(int lane, const LaneSchedule::Edge& edge) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    forwarding_done_ = false;
  }
  for (int s = 0; s < edge.streams; ++s) {
    senders_.push_back(std::make_unique<LaneSender>(context_, lane, edge.child, s, edge.streams));
    if (const double cap = SendCap(lane, edge.streams); cap > 0) senders_.back()->CapSendRate(cap);
    ++senders_running_;
    Spawn(RunSender(*senders_.back()));
  }
}

Status PlanExecution::ApplyPatches(const std::vector<PlanPatch>& patches, const std::vector<KnownMember>& members) {
  for (const KnownMember& member : members) {
    if (member.index < 0 || static_cast<size_t>(member.index) >= names_.size()) continue;
    if (names_[member.index].empty()) names_[member.index] = member.name;
    if (data_addresses_[member.index].empty()) data_addresses_[member.index] = member.data_address;
  }
  for (const PlanPatch& patch : patches) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (patch.version <= patch_version_) continue;
    }
    // This member's own parent changes only from the one it has (the moves in order).
    std::vector<int> parents = ParentsOf(schedule_);
    for (const EdgeMove& move : patch.moves) {
      if (move.lane < 0 || static_cast<size_t>(move.lane) >= parents.size() || move.child != self()) continue;
      if (parents[move.lane] != move.old_parent) {
        return Status::FailedPrecondition("patch " + std::to_string(patch.version) + " moves this member from member " +
                                          std::to_string(move.old_parent) + " in lane " + std::to_string(move.lane) +
                                          ", but its parent there is member " + std::to_string(parents[move.lane]));
      }
      parents[move.lane] = move.new_parent;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      patch_version_ = patch.version;
    }
    for (const EdgeMove& move : patch.moves) ApplyMove(patch.version, move);
  }
  return Status::Ok();
}

void PlanExecution::ApplyMove(int version, const EdgeMove& move) {
  const int me = self();
  if (move.child != me && move.old_parent != me && move.new_parent != me) return;
  const int lane = move.lane;
  const std::string& child = names_[move.child];
  if (move.old_parent == me) {
    for (const std::unique_ptr<LaneSender>& sender : senders_) {
      if (sender->lane() == lane && sender->child() == move.child) sender->Stop();
    }
    spdlog::info("plan {} lane {}: {} moved to {} (patch {})", ToHex(id_), lane, child, names_[move.new_parent],
                 version);
  }
  schedule_.ApplyMove(move);
  if (move.child == me) {
    intake_.DropParent(lane, move.old_parent);
    watch_.Reattached(lane, move.new_parent, std::chrono::steady_clock::now());
    const uint64_t held = schedule_.HeldPrefix(lane, [this](uint64_t chunk) { return store_->Has(chunk); });
    spdlog::info("plan {} lane {}: new parent {} (patch {}); {} of the lane's {} chunks held here", ToHex(id_), lane,
                 names_[move.new_parent], version, held, schedule_.LogSize(lane));
  }
  if (move.new_parent == me && senders_made_) {
    for (const LaneSchedule::Edge& edge : schedule_.ChildrenOf(lane)) {
      if (edge.child == move.child) AddSenders(lane, edge);
    }
    spdlog::info("plan {} lane {}: feeding {} (patch {})", ToHex(id_), lane, child, version);
  }
}

asio::awaitable<void> PlanExecution::RunSender(LaneSender& sender) {
  co_await sender.Run();
  if (--senders_running_ == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    forwarding_done_ = true;
  }
}

double PlanExecution::SendCap(int lane, int streams, bool yielding) const {
  const Lane& planned = plan_.lanes[lane];
  if (planned.source != self() || planned.planned_bps <= 0) return 0;
  return planned.planned_bps / 8 / streams * (yielding ? pacing_.yielding_factor() : pacing_.factor());
}

asio::awaitable<void> PlanExecution::PaceLanes() {
  // Each sender's rate over about the last half second (a moving average of the ticks'), to tell
  // the lanes that keep up from those a slow child holds back.
  constexpr double kRateWeight = 0.5;
  asio::steady_timer tick(io_);
  auto last = std::chrono::steady_clock::now();
  std::vector<double> rates;
  while (!Stopping() && senders_running_ > 0) {
    tick.expires_after(std::chrono::milliseconds(250));
    boost::system::error_code ec;
    co_await tick.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    const auto now = std::chrono::steady_clock::now();
    const double elapsed_s = std::max(1e-3, std::chrono::duration<double>(now - last).count());
    last = now;
    rates.resize(senders_.size(), 0);
    std::vector<PacedSend> sends(senders_.size());
    uint64_t acked = 0;
    double caps = 0;
    for (size_t i = 0; i < senders_.size(); ++i) {
      LaneSender& sender = *senders_[i];
      const double cap = SendCap(sender.lane(), sender.stream_count());
      if (cap <= 0) continue;
      const uint64_t sent = sender.AckedSinceLast();
      acked += sent;
      rates[i] += kRateWeight * (static_cast<double>(sent) / elapsed_s - rates[i]);
      if (!sender.Connected()) continue;
      caps += sender.send_cap();
      const Lane& lane = plan_.lanes[sender.lane()];
      const std::optional<uint64_t> position = sender.AckedPosition();
      sends[i] = {position.has_value(),
                  static_cast<double>(position.value_or(0)) * static_cast<double>(plan_.chunk_bytes) * 8 / lane.planned_bps,
                  rates[i] >= SendPacing::kKeepsUp * cap};
    }
    const std::vector<bool> yielding = SendPacing::Yielding(sends);
    const bool balancing = std::find(yielding.begin(), yielding.end(), true) != yielding.end();
    const bool grew = pacing_.Observe(now, acked, caps, balancing);
    for (size_t i = 0; i < senders_.size(); ++i) {
      LaneSender& sender = *senders_[i];
      const double cap = SendCap(sender.lane(), sender.stream_count(), yielding[i]);
      if (cap > 0 && cap != sender.send_cap()) sender.CapSendRate(cap);
    }
    if (grew) {
      spdlog::info("plan {}: the children took their lanes' caps; now {:.2f} of the planned rates", ToHex(id_),
                   pacing_.factor());
    }
  }
}

asio::awaitable<void> PlanExecution::WatchParents() {
  // Every twentieth of --parent-silent: a very slow lane is judged over 0.35 of it (ParentWatch),
  // and its samples' age decides how soon (a straggler's children moved 0.2 s sooner at a tenth
  // than at a quarter: 0.63-0.65 s into a broadcast instead of 0.83-0.86).
  const auto period = std::max(options_.parent_silent / 20, std::chrono::milliseconds(20));
  auto last_judged = std::chrono::steady_clock::now();
  const auto holds = [this](uint64_t chunk) { return store_->Has(chunk); };
  std::vector<ParentWatch::LaneNow> lanes(schedule_.lanes());
  probing_.assign(schedule_.lanes(), false);
  while (!Stopping() && !store_->Complete()) {
    co_await judge_now_.Wait(period);
    const auto now = std::chrono::steady_clock::now();
    const double trickle_bytes = kTrickleBytesPerSecond * std::chrono::duration<double>(now - last_judged).count();
    last_judged = now;
    for (size_t l = 0; l < lanes.size(); ++l) {
      const int lane = static_cast<int>(l);
      // Bytes of a part still arriving are progress: a slow link is not a silent parent (but
      // a trickle is no progress).
      if (const auto arrived = intake_.KernelBytesSinceLast(lane)) {
        watch_.Arrived(lane, *arrived);
        if (static_cast<double>(*arrived) >= trickle_bytes) watch_.Progress(lane, now);
      }
      const uint64_t missing = schedule_.LogSize(lane) - schedule_.HeldPrefix(lane, holds);
      lanes[l] = {schedule_.HoldsWholeLane(lane, holds), intake_.OwesParent(lane),
                  std::min(missing * plan_.chunk_bytes, plan_.LaneBytes(lane))};
    }
    for (size_t l = 0; l < lanes.size(); ++l) {
      const int lane = static_cast<int>(l);
      if (probing_[l] || !watch_.ShouldProbe(lane, lanes[l], now)) continue;
      probing_[l] = true;
      Spawn(ProbeParent(lane, schedule_.ParentOf(lane)));
    }
    std::vector<std::pair<LaneTrouble, std::string>> troubles;
    for (const LaneTrouble& trouble : watch_.Judge(now, lanes)) {
      const std::string& parent = names_[trouble.parent];
      if (trouble.fresh) {
        spdlog::warn("plan {} lane {}: parent {} is {} ({:.1f} s); reported to the source", ToHex(id_), trouble.lane,
                     parent, RepairReasonName(trouble.reason), trouble.since_s);
      }
      troubles.emplace_back(trouble, parent);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lane_trouble_ = std::move(troubles);
    }
    repair_.Tick(now);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  lane_trouble_.clear();
}

asio::awaitable<void> PlanExecution::ProbeParent(int lane, int parent) {
  const bool refused = co_await options_.transport->Refuses(data_addresses_[parent], options_.connect_timeout);
  probing_[lane] = false;
  if (!refused) co_return;
  spdlog::info("plan {} lane {}: parent {} refuses connections", ToHex(id_), lane, names_[parent]);
  watch_.Refused(lane, parent);
  judge_now_.Notify();
}

void PlanExecution::FollowFill(std::chrono::milliseconds pause) {
  auto self = shared_from_this();
  asio::post(workers_, [self, pause] {
    Result<uint64_t> newly = self->context_.capabilities.growing->VerifyFilled();
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

void PlanExecution::OnWorkers(std::function<void()> work) {
  asio::post(workers_, [self = shared_from_this(), work = std::move(work)] { work(); });
}

void PlanExecution::OnIo(std::function<void()> work) {
  asio::post(io_, [self = shared_from_this(), work = std::move(work)] { work(); });
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
  snapshot.pushed_sent_bytes = traffic_.sent_bytes.load(std::memory_order_relaxed);
  snapshot.pushed_received_bytes = traffic_.received_bytes.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot.state = state_;
  snapshot.error = error_;
  snapshot.digest = digest_;
  snapshot.finished_s = finished_s_;
  snapshot.forwarding_done = forwarding_done_;
  if (state_ == ExecutionState::kRunning) snapshot.lane_trouble = lane_trouble_;
  snapshot.patch_version = patch_version_;
  if (digests_ != nullptr) snapshot.digest_batches_held = digests_->Held();
  if (const int64_t sent = first_payload_sent_ns_.load(); sent != 0) {
    snapshot.first_payload_sent = std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(sent));
  }
  return snapshot;
}

void PlanExecution::SetDigestTree(const DigestTree& tree) {
  if (digests_ != nullptr) digest_tree_ = std::make_unique<DigestTreeFeed>(context_, self(), tree);
}

Status PlanExecution::CheckParent(const Hello& hello) const {
  if (hello.lane != kDigestTreeLane) return schedule_.CheckParent(hello);
  if (digest_tree_ == nullptr) return Status::InvalidArgument("this plan has no digest tree");
  return digest_tree_->CheckParent(hello);
}

void PlanExecution::AdoptParentConnection(ConnectionPtr connection, const Hello& hello) {
  if (hello.lane == kDigestTreeLane) return Spawn(ReceiveDigestTree(context_, std::move(connection)));
  const ParentStream from{static_cast<int>(hello.lane), static_cast<int>(hello.stream),
                          static_cast<int>(hello.stream_count), static_cast<int>(hello.parent)};
  Spawn(intake_.Receive(std::move(connection), from));
}

void PlanExecution::Delivered(int lane, int child, uint64_t chunk) {
  if (schedule_.Delivered(lane, child, chunk) && store_->Has(chunk)) ReleaseFromPageCache(chunk);
}

void PlanExecution::ChunkStored(int lane, uint64_t chunk, std::span<const uint8_t> data, bool newly) {
  if (newly && options_.counters) options_.counters->ChunkVerified(Transport::kPush);
  if (newly) lane_last_chunk_s_[lane] = SecondsSince(started_);
  if (swarm_ && !data.empty()) swarm_->ChunkVerifiedByPush(chunk, data);
  if (plan_.shared_chunks) schedule_.AddToLog(lane, chunk);
  if (schedule_.ForwardedToAll(chunk)) ReleaseFromPageCache(chunk);
  OnChunkVerified();
}

void PlanExecution::ReleaseFromPageCache(uint64_t chunk) {
  ForwardedChunks* const forwarded = context_.capabilities.forwarded;
  if (forwarded == nullptr) return;
  if (!forwarded->MayBlock()) return forwarded->Forwarded(chunk);
  OnWorkers([forwarded, chunk] { forwarded->Forwarded(chunk); });
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
  OnWorkers([this] {
    Result<Digest> digest = store_->Finalize(options_.sync_on_finish);
    if (digest.ok() && after_finalize_) {
      if (Status step = after_finalize_(); !step.ok()) digest = step;
    }
    OnIo([this, digest = std::move(digest)]() mutable { OnFinalized(std::move(digest)); });
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
  if (plan_.lanes.size() > 1 && schedule_.ReceivesAnyLane()) {
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

}  // namespace gridcast
