// PlanExecution: this member's share of one Plan, run on the data plane's io_context.
//
// For every lane it receives the lane's chunks from its parent (connections the parent opens,
// handed over by DataPlane after the handshake) and forwards each verified chunk to its
// children (connections it opens on its DataTransport, with the plan's parallel streams per edge),
// in lane order, with at most `window_chunks` unacknowledged chunks per connection. It keeps
// the lane scheduling (order, windows, acknowledgements, resends); connecting, securing and
// moving bytes are the DataTransport's (daemon/transport/connection.h).
//
// The io thread moves bytes: a received chunk is read into a pooled buffer and handed to the
// worker pool, which hashes it and writes it once (PayloadStore::WriteChunk); the io thread
// meanwhile reads the next chunk and forwards earlier ones. In memory a chunk is read straight
// into its final pages (PayloadStore::ClaimPlace) and, when its digest hashes faster than a
// handoff costs (XXH3), verified there on the io thread. Children are served from the store's
// chunks (PayloadStore::ChunkAt: the file, whose page cache holds what was just written, and
// which sendfile sends without a copy through user space; or the mapped pages); lagging
// children and resumed members cost no chunk buffer.
// Memory is bounded by the windows (buffers being read or verified), never by the payload.
// Lost connections are re-opened; the child's bitmap in the handshake says what it already
// holds, so a restarted member re-receives only what it had not verified.
//
// Where the plan's lanes share chunks (Plan::shared_chunks), each lane's chunk order is a log
// that grows: the source logs a chunk in a lane as the lane's connections drain (ClaimChunk),
// every other member as chunks arrive, and a member holds its acknowledgements while its
// children in a lane lag (LaneLags), so a slow edge slows its lane back to the source.
//
// Pull and hybrid plans also have a Swarm (BitTorrent) writing into the same store; a pull plan
// has no lanes, and the execution then only follows the store until it is complete.
//
// Knows no algorithm: only parents, children, lanes and chunk order.
// Thread-safety: everything runs on the io_context's single thread except Snapshot() and
// RequestStop(), which may be called from any thread.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collectives/plan.h"
#include "common/buffer_pool.h"
#include "daemon/transport/notifier.h"
#include "daemon/executor/swarm.h"
#include "daemon/metrics/daemon_counters.h"
#include "daemon/store/payload_store.h"
#include "daemon/transport/connection.h"
#include "daemon/transport/frame.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

struct ExecutionOptions {
  std::string secret;
  // What connections to children are opened on (tcp, tls or loopback); the daemon's, shared
  // with its DataPlane. Required.
  std::shared_ptr<DataTransport> transport;
  // Unacknowledged chunks per connection (or the plan's window, if smaller). More hides
  // latency; each costs a chunk on restart.
  uint32_t window_chunks = 8;
  // Idle chunk buffers kept for reuse (buffers in use are bounded by the windows).
  size_t cache_chunks = 32;
  // Received chunks forwarded to every child are written back and leave the page cache beyond
  // this many bytes (PayloadStore::SetPageCacheWindow); 0 leaves the page cache to the kernel.
  uint64_t page_cache_window_bytes = uint64_t{64} << 20;
  // A connection with no progress for this long is dropped (and re-opened by the parent).
  std::chrono::milliseconds io_timeout = std::chrono::seconds(120);
  std::chrono::milliseconds reconnect_delay = std::chrono::milliseconds(200);
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(5);
  // fdatasync a finished payload before reporting it done. Durable against power loss, but
  // on ext4 a sync also waits for every other dirty file of the journal: many members
  // sharing one disk (netgrid) or a busy disk make it the slowest step of a broadcast.
  bool sync_on_finish = false;
  // Hybrid plans: a lane whose parent connection ended, or whose parent was silent (no bytes,
  // no keepalive) for this long, is repaired by pulling its missing chunks from the swarm.
  std::chrono::milliseconds repair_stall = std::chrono::seconds(2);
  // The daemon's counters (bytes per peer, chunks, plan outcomes); null counts nothing.
  std::shared_ptr<DaemonCounters> counters;
};

enum class ExecutionState { kPrepared, kRunning, kDone, kFailed, kStopped };

struct ExecutionSnapshot {
  ExecutionState state = ExecutionState::kPrepared;
  uint64_t chunks_done = 0;
  uint64_t chunks_total = 0;
  uint64_t bytes_done = 0;
  std::string error;
  Digest digest{};            // when done: ChunkListDigest of the stored chunks
  double finished_s = 0;      // seconds from Start() to completion, when done
  bool forwarding_done = false;  // every child holds everything this member sends it
  // Payload bytes this member sent to its children and received from its parents (push lanes;
  // a swarm's bytes are in its SwarmReport).
  uint64_t pushed_sent_bytes = 0;
  uint64_t pushed_received_bytes = 0;
  // When this member first handed payload bytes to a socket (push or swarm), if it has.
  std::optional<std::chrono::steady_clock::time_point> first_payload_sent;
};

class PlanExecution final : public LaneReceiver, public std::enable_shared_from_this<PlanExecution> {
 public:
  // REQUIRES: ValidatePlan(plan).ok(); data_addresses has one "host:port" per member.
  // `workers` runs what would stall the io thread (hashing and writing chunks, finishing the
  // payload); it must outlive the execution's work.
  PlanExecution(boost::asio::io_context& io, boost::asio::thread_pool& workers, Plan plan,
                PlanId id, int self, std::vector<std::string> data_addresses,
                std::shared_ptr<PayloadStore> store, ExecutionOptions options);

  const PlanId& id() const { return id_; }
  const Plan& plan() const { return plan_; }
  int self() const { return self_; }
  const PayloadStore& store() const { return *store_; }
  const std::shared_ptr<PayloadStore>& shared_store() const { return store_; }

  // Before Start(): the swarm of a pull or hybrid plan, started and left with this execution.
  void AttachSwarm(std::shared_ptr<PullSwarm> swarm) { swarm_ = std::move(swarm); }
  // Before Start: a step that runs (on the worker pool) once the store has finalized the
  // complete payload and before this member reports done; its error fails the execution.
  void SetAfterFinalize(std::function<Status()> step) { after_finalize_ = std::move(step); }
  const std::shared_ptr<PullSwarm>& swarm() const { return swarm_; }
  // Any thread: the swarm verified a chunk in the store (`newly`: it brought the chunk; false
  // when the store held it already).
  void OnSwarmChunkVerified(bool newly);
  // Any thread: every peer of this member holds `chunk` (a pull member's swarm): nobody will
  // ask this member for it, so it may leave the page cache.
  void OnSwarmChunkShared(uint64_t chunk) { ReleaseFromPageCache(chunk); }
  // Any thread: payload bytes are about to leave for a peer (the first call is remembered).
  void NotePayloadSent();

  // On the io thread: start forwarding (opens connections to children). The completion time
  // (finished_s) counts from `source_started`, the broadcast's start as the source had it.
  void Start(std::chrono::steady_clock::time_point source_started);
  // Any thread: stop everything; state becomes kStopped unless already done or failed.
  void RequestStop(std::string reason);

  // On the io thread, during the child side of a handshake: OK when `hello.parent` is this
  // member's parent in `hello.lane` and the stream is one the plan has on that edge.
  Status CheckParent(const Hello& hello) const override;
  std::string DataAddressOf(uint32_t member) const override { return data_addresses_.at(member); }
  std::vector<uint8_t> HeldBitmap() const override;
  // On the io thread: receive a lane from an authenticated parent over `connection`.
  void AdoptParentConnection(ConnectionPtr connection, const Hello& hello) override;

  ExecutionSnapshot Snapshot() const;

 private:
  struct SenderConnection;
  struct ReceiverConnection;

  // Runs a coroutine of this object on io_, holding an owner of it until the coroutine ends.
  void Spawn(boost::asio::awaitable<void> task);
  boost::asio::awaitable<void> RunSender(int lane, int child, int stream, int stream_count);
  boost::asio::awaitable<Status> SendOnce(int lane, int child, int stream, int stream_count);
  // One chunk to the child of `conn`, counted (a second send of it counts as a resend).
  boost::asio::awaitable<Status> SendChunk(SenderConnection& conn, uint64_t chunk);
  // A frame without payload: a keepalive, or (shared lanes) a chunk the child holds assigned
  // to the connection's lane.
  boost::asio::awaitable<Status> SendHeader(SenderConnection& conn, FrameType type, uint64_t chunk);
  // Returns once `ready()`, telling the child meanwhile that its parent is alive (keepalives).
  boost::asio::awaitable<Status> WaitUntil(SenderConnection& conn, const std::function<bool()>& ready);
  // Returns once the connection can take one more chunk; resends what the child refused.
  boost::asio::awaitable<Status> WaitForWindow(SenderConnection& conn);
  boost::asio::awaitable<void> ReadAcks(std::shared_ptr<SenderConnection> conn);
  boost::asio::awaitable<void> RunReceiver(ConnectionPtr connection, int lane, int stream, int stream_count);
  // Writes the ACK and NACK frames of a parent connection as the workers finish chunks.
  boost::asio::awaitable<void> WriteReplies(std::shared_ptr<ReceiverConnection> conn);
  // A received chunk waiting for the workers: in `data`, or in its place (data null).
  struct WaitingChunk {
    std::shared_ptr<ReceiverConnection> conn;
    FrameHeader header;
    std::shared_ptr<std::vector<uint8_t>> data;
  };
  // Queues a received chunk for the workers.
  void StoreOnWorkers(WaitingChunk waiting);
  // On a worker: verifies and stores up to kChunksHashedTogether waiting chunks at once, then
  // tells the io thread (OnChunkStored). Where SHA-256 hashes best together (HashesBestTogether)
  // one worker at a time does so, batch after batch, so that the chunks arriving while it hashes
  // form the next batch (a lone chunk still waits for nothing); else every chunk gets a worker.
  void StoreWaitingChunks();
  // On the io thread, with what the workers made of a received chunk.
  // `newly`: this write marked the chunk (false when another path had verified it first).
  void OnChunkStored(const std::shared_ptr<ReceiverConnection>& conn, const FrameHeader& header,
                     std::shared_ptr<std::vector<uint8_t>> data, const Status& written, bool newly);
  // Hybrid: watches every lane this member receives and asks the swarm for the missing
  // chunks of one that stalled or lost its parent.
  boost::asio::awaitable<void> WatchLanes();
  // How often a parent waiting for a chunk tells its children it is alive (KEEPALIVE frames):
  // well within repair_stall, so only a silent parent counts as stalled.
  std::chrono::milliseconds KeepaliveInterval() const;
  // Hybrid: bytes or a keepalive arrived on `lane` from its parent.
  void MarkLaneProgress(int lane);
  // Positions in the lane's chunk order carried by `stream` of `stream_count` (fixed lanes).
  bool StreamCarries(int lane, uint64_t chunk, int stream, int stream_count) const;
  // Logs `chunk` in `lane` (its children in that lane wait for it) unless it is logged already.
  void Log(int lane, uint64_t chunk);
  bool EveryChunkLogged() const { return logged_count_ == logged_in_.size(); }
  // At the source of shared lanes: logs the next unclaimed chunk in `lane` once every open
  // connection of the lane has been handed all it logged, so a lane takes chunks as fast as
  // its slowest edge from here drains them. False when it may not (yet).
  bool ClaimChunk(int lane);
  // Shared lanes: chunks of `lane` wait here for a child's window (more than kLaneSlackChunks
  // for one connection). Acknowledgements to the parent are then held back, so a slow edge slows
  // its lane all the way up to the source, which gives the lane fewer chunks.
  bool LaneLags(int lane) const;
  void OnChunkVerified();
  // At a source whose sender still writes the payload (PayloadStore::OpenFilling): the
  // workers verify what the file holds now, and each chunk is sent once they have. Polled
  // every `pause` (1 ms while the file grows, backing off to 50 ms); the coordinator's stall
  // timeout ends a broadcast whose sender stopped writing.
  void FollowFill(std::chrono::milliseconds pause);
  // `child` holds `chunk` of `lane` (acknowledged, or in its bitmap); once every child has it,
  // the store may let it leave the page cache.
  void Delivered(int lane, int child, uint64_t chunk);
  void ReleaseFromPageCache(uint64_t chunk);
  // On the io thread, with the result of PayloadStore::Finalize from the blocking pool.
  void OnFinalized(Result<Digest> digest);
  void Fail(const Status& status);
  // Under mutex_, as the state leaves kPrepared or kRunning for good.
  void CountEnd(PlanOutcome outcome) const;
  // The daemon's counters of the bytes exchanged with `member` by push; null without counters.
  PeerTraffic* PushTrafficWith(int member) const;
  void SenderFinished();
  // Remembers a connection so RequestStop()/Fail() can close it; forgets closed ones.
  void Track(const ConnectionPtr& connection);
  bool Stopping() const;

  boost::asio::io_context& io_;
  boost::asio::thread_pool& workers_;
  const Plan plan_;
  const PlanId id_;
  const int self_;
  const std::vector<std::string> data_addresses_;
  const std::shared_ptr<PayloadStore> store_;
  std::shared_ptr<PullSwarm> swarm_;
  std::function<Status()> after_finalize_;
  const ExecutionOptions options_;
  // Per lane: the chunks this member passes on in it, in the order it does (its log), and this
  // member's parent (-1 at the source). A plan of fixed lanes logs every lane's chunks at the
  // start; where lanes share chunks (Plan::shared_chunks) the source logs a chunk in the lane
  // that claims it (ClaimChunk) and every other member as it arrives (or is assigned), and a
  // lane's log is final once every chunk is logged somewhere.
  std::vector<std::vector<uint64_t>> lane_log_;
  std::vector<int> parent_;
  // io thread only. Per chunk, the lane it is logged in (-1: none yet; a plan has at most
  // kMaxPlanLanes, 4,096); how many are.
  std::vector<int16_t> logged_in_;
  uint64_t logged_count_ = 0;
  // Per lane, this member's children in it (each chunk logged there waits for them all).
  std::vector<uint32_t> lane_children_;
  // At the source of shared lanes: the next chunk no lane has claimed.
  uint64_t next_unclaimed_ = 0;
  // io thread only. Per lane, this member's open connections to its children in it.
  std::vector<std::vector<SenderConnection*>> lane_senders_;
  // io thread only. Per chunk, the children of this member that do not hold it yet; per
  // (lane, child) edge, which chunks the child holds.
  std::vector<uint32_t> sends_left_;
  std::map<std::pair<int, int>, std::vector<bool>> delivered_;
  // io thread only. Per (lane, child) edge, which chunks were sent on it: a second send is a
  // resend (the child refused the chunk, or a connection was lost with it in flight).
  std::map<std::pair<int, int>, std::vector<bool>> sent_;

  const std::shared_ptr<BufferPool> buffers_;  // chunk buffers, reused

  // io thread only.
  // A chunk was stored or logged, or (shared lanes) a connection to a child was handed its next.
  Notifier chunk_arrived_;
  int senders_running_ = 0;
  bool finalizing_ = false;
  std::chrono::steady_clock::time_point started_;
  std::vector<ConnectionPtr> open_connections_;
  std::vector<std::chrono::steady_clock::time_point> lane_progress_;  // last bytes or keepalive per lane
  enum class ParentTrouble { kNone, kGone, kRepairing };
  std::vector<ParentTrouble> parent_trouble_;  // the connection ended, or the parent said it pulls
  std::vector<bool> lane_repaired_; // its missing chunks were handed to the swarm
  // When each lane's last chunk so far was verified here, seconds from the start: logged when
  // done (the lanes' spread is what an uneven network costs a plan of many lanes).
  std::vector<double> lane_last_chunk_s_;

  std::mutex waiting_mutex_;
  // Bounded: each holds one of a parent connection's window of buffers or claimed places.
  std::deque<WaitingChunk> waiting_;  // guarded by waiting_mutex_
  bool draining_ = false;             // a worker is in StoreWaitingChunks; guarded by waiting_mutex_
  const bool hashed_together_;        // HashesBestTogether(the plan's digest)
  const uint32_t window_chunks_;      // the smaller of the daemon's and the plan's

  mutable std::mutex mutex_;
  ExecutionState state_ = ExecutionState::kPrepared;  // guarded by mutex_
  std::string error_;                                 // guarded by mutex_
  Digest digest_{};                                   // guarded by mutex_
  double finished_s_ = 0;                             // guarded by mutex_
  bool forwarding_done_ = false;                      // guarded by mutex_
  bool stop_requested_ = false;                       // guarded by mutex_
  // steady_clock nanoseconds of the first NotePayloadSent(); 0 = none yet. Atomic: the send
  // path checks it per chunk without the mutex.
  std::atomic<int64_t> first_payload_sent_ns_{0};
  std::atomic<uint64_t> pushed_sent_bytes_{0}, pushed_received_bytes_{0};
};

}  // namespace gridcast
