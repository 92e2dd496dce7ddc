// PlanExecution: this member's share of one Plan, run on the data plane's io_context.
//
// For every lane it receives the lane's chunks from its parent (connections the parent opens,
// handed over by DataPlane after the handshake) and forwards each verified chunk to its
// children (connections it opens on its DataTransport, with the plan's parallel streams per
// edge), in lane order, with at most `window_chunks` unacknowledged chunks per connection.
// The work follows the data, a part per step, each in a file of its own:
//   LaneSchedule (lane_schedule.h)  what each lane carries here, in which order, to whom
//   ChunkIntake (chunk_intake.h)    a parent's frames checked, chunks placed and acknowledged
//   ChunkVerification (chunk_verification.h)  chunks hashed and stored, on which thread
//   LaneSender (lane_sender.h)      one stream to a child: order, window, acks, resends
//   ParentWatch (parent_watch.h)    whether each lane still arrives; trouble reported up
//   LaneRepair (lane_repair.h)      hybrid plans: a stalled lane pulled from the swarm
//   SourceSealing (source_sealing.h)  a source that hashes its payload as it sends it
//   SendPacing (send_pacing.h)      a lane's source: each child connection capped near its plan
// This class owns them, runs the execution's state (start, stop, failure, completion) and
// what the parts share (ExecutionHost). Connecting, securing and moving bytes are the
// DataTransport's (daemon/transport/connection.h).
//
// Memory is bounded by the windows (buffers being read or verified), never by the payload.
// Lost connections are re-opened; the child's bitmap in the handshake says what it already
// holds, so a restarted member re-receives only what it had not verified.
//
// Pull and hybrid plans also have a Swarm (BitTorrent) writing into the same store; a pull plan
// has no lanes, and the execution then only follows the store until it is complete.
//
// Knows no algorithm: only parents, children, lanes and chunk order.
// Thread-safety: everything runs on the io_context's single thread except Snapshot(),
// RequestStop() and the swarm's notifications, which may be called from any thread.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collectives/plan.h"
#include "daemon/executor/chunk_intake.h"
#include "daemon/executor/digest_tree.h"
#include "daemon/executor/execution_context.h"
#include "daemon/executor/lane_repair.h"
#include "daemon/executor/lane_schedule.h"
#include "daemon/executor/lane_sender.h"
#include "daemon/executor/parent_watch.h"
#include "daemon/executor/send_pacing.h"
#include "daemon/executor/source_sealing.h"
#include "daemon/executor/swarm.h"
#include "daemon/store/payload_store.h"
#include "daemon/transport/handshake.h"

namespace gridcast {

enum class ExecutionState { kPrepared, kRunning, kDone, kFailed, kStopped };

// A member a plan patch names, by whole-plan index, for members whose slice did not list it.
struct KnownMember {
  int index = 0;
  std::string name;
  std::string data_address;
};

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
  uint64_t digest_batches_held = 0;  // signed batches of digests held here (plans streaming them)
  // While running: the lanes whose parents do not deliver (ParentWatch's last verdicts), each
  // with its parent's name.
  std::vector<std::pair<LaneTrouble, std::string>> lane_trouble;
  int patch_version = 0;  // the last plan patch applied here
};

class PlanExecution final : public LaneReceiver,
                            public ExecutionHost,
                            public std::enable_shared_from_this<PlanExecution> {
 public:
  // REQUIRES: ValidatePlan(plan).ok(); data_addresses has one "host:port" per member.
  // `workers` runs what would stall the io thread (hashing and writing chunks, finishing the
  // payload); it must outlive the execution's work.
  // `digests`: the plan's signed batches of chunk digests (Payload.digest_key), or null when
  // the plan streams none.
  PlanExecution(boost::asio::io_context& io, boost::asio::thread_pool& workers, Plan plan,
                PlanId id, int self, std::vector<std::string> data_addresses,
                std::shared_ptr<PayloadStore> store, ExecutionOptions options,
                std::unique_ptr<DigestStream> digests = nullptr);

  const PlanId& id() const { return id_; }
  const Plan& plan() const { return plan_; }
  int self() const { return schedule_.self(); }
  const PayloadStore& store() const { return *store_; }
  const std::shared_ptr<PayloadStore>& shared_store() const { return store_; }

  // Before Start(): the swarm of a pull or hybrid plan, started and left with this execution.
  void AttachSwarm(std::shared_ptr<PullSwarm> swarm) { swarm_ = std::move(swarm); }
  // Before Start(), for a plan that streams digests: its digest tree (digest_tree.h). Start()
  // dials this member's children in it; its ancestors there are accepted as parents.
  void SetDigestTree(const DigestTree& tree);
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
  void NotePayloadSent() override;

  // On the io thread: start forwarding (opens connections to children). The completion time
  // (finished_s) counts from `source_started`, the broadcast's start as the source had it.
  void Start(std::chrono::steady_clock::time_point source_started);
  // Any thread: stop everything; state becomes kStopped unless already done or failed.
  void RequestStop(std::string reason);
  // On the io thread, before or after Start: applies the moves of `patches` that name this
  // member, in version order, skipping versions applied already (docs/repair.md). As the old
  // parent of a child it stops sending it the lane; as the new parent it starts (once
  // started); as the child it takes the new parent, closes the old one's connections and gives
  // the lane a new grace. `members` are the members the patches name, for those the slice did
  // not list (their names and data addresses). FailedPrecondition, and nothing of that patch
  // or after it applied, for a patch that moves this member from a parent it does not have.
  Status ApplyPatches(const std::vector<PlanPatch>& patches, const std::vector<KnownMember>& members);

  // The child side of a handshake (LaneReceiver), on the io thread.
  Status CheckParent(const Hello& hello) const override;
  std::string DataAddressOf(uint32_t member) const override { return data_addresses_.at(member); }
  std::vector<ChunkRun> HeldRuns() const override { return store_->HeldRuns(kMaxAcceptHeldRuns); }
  bool FindsHeldChunksLater() const override { return finds_held_later_; }
  void AdoptParentConnection(ConnectionPtr connection, const Hello& hello) override;

  ExecutionSnapshot Snapshot() const;

 private:
  // ExecutionHost, for the parts.
  void Spawn(boost::asio::awaitable<void> task) override;
  void OnWorkers(std::function<void()> work) override;
  void OnIo(std::function<void()> work) override;
  bool Stopping() const override;
  void Fail(const Status& status) override;
  void Track(const ConnectionPtr& connection) override;
  void Delivered(int lane, int child, uint64_t chunk) override;
  void ChunkStored(int lane, uint64_t chunk, std::span<const uint8_t> data, bool newly) override;

  // Makes and runs the senders of the edge to `edge.child` in `lane`, one per stream.
  void AddSenders(int lane, const LaneSchedule::Edge& edge);
  // Runs one sender and counts it finished.
  boost::asio::awaitable<void> RunSender(LaneSender& sender);
  // What one stream of `lane` may send at, payload bytes per second, where this member is the
  // lane's source and the plan gives the lane a rate (less while it yields to a lane behind
  // it); 0: not capped.
  double SendCap(int lane, int streams, bool yielding = false) const;
  // While senders run at a lane's source: the children's acknowledged bytes fed to pacing_,
  // the caps raised when it says, and lowered where a lane is ahead of the others
  // (SendPacing::Yielding).
  boost::asio::awaitable<void> PaceLanes();
  // One move of a patch of version `version` (ApplyPatches).
  void ApplyMove(int version, const EdgeMove& move);
  // Until this member holds everything: judges its lanes (ParentWatch) a few times per
  // `parent_silent`, logs and publishes the verdicts, and lets a hybrid plan's LaneRepair act.
  boost::asio::awaitable<void> WatchParents();
  // Dials `lane`'s parent `parent` to learn whether its daemon still runs (ParentWatch::
  // ShouldProbe), and tells the watch when the dial is refused.
  boost::asio::awaitable<void> ProbeParent(int lane, int parent);
  // At a source whose sender still writes the payload (StoreCapabilities::growing): the
  // workers verify what the file holds now, and each chunk is sent once they have. Polled
  // every `pause` (1 ms while the file grows, backing off to 50 ms); the coordinator's stall
  // timeout ends a broadcast whose sender stopped writing.
  void FollowFill(std::chrono::milliseconds pause);
  // A chunk this member holds went to every child it sends it to: it may leave the page cache.
  void ReleaseFromPageCache(uint64_t chunk);
  void OnChunkVerified();
  // Takes, on a worker, the chunks of newly verified batch `batch` this member holds already
  // (KnownChunks), and tells its parents (HELD).
  void TakeKnownChunks(uint64_t batch);
  // This member's digests arrive during the broadcast and its store has somewhere to look
  // for chunks it holds already: its parents wait for its HELD frame of each batch.
  bool finds_held_later_ = false;
  // On the io thread, with the result of PayloadStore::Finalize from the blocking pool.
  void OnFinalized(Result<Digest> digest);
  // Under mutex_, as the state leaves kPrepared or kRunning for good.
  void CountEnd(PlanOutcome outcome) const;

  boost::asio::io_context& io_;
  boost::asio::thread_pool& workers_;
  const Plan plan_;
  const PlanId id_;
  std::vector<std::string> names_;           // io thread: ExecutionContext::names
  std::vector<std::string> data_addresses_;  // io thread: ExecutionContext::data_addresses
  const std::shared_ptr<PayloadStore> store_;
  std::shared_ptr<PullSwarm> swarm_;
  std::function<Status()> after_finalize_;
  const ExecutionOptions options_;
  const std::unique_ptr<DigestStream> digests_;

  // io thread only, but for the traffic's atomics.
  LaneSchedule schedule_;
  Notifier chunk_arrived_;
  PushTraffic traffic_;
  ParentWatch watch_;
  ExecutionContext context_;
  LaneRepair repair_;
  SendPacing pacing_;
  std::vector<bool> probing_;  // by lane: a ProbeParent runs
  Notifier judge_now_;         // wakes WatchParents before its next tick
  ChunkIntake intake_;
  std::vector<std::unique_ptr<LaneSender>> senders_;
  std::unique_ptr<DigestTreeFeed> digest_tree_;
  std::unique_ptr<SourceSealing> sealing_;  // at a StreamedSource only
  int senders_running_ = 0;
  bool senders_made_ = false;  // Start() made this member's senders
  bool finalizing_ = false;
  std::chrono::steady_clock::time_point started_;
  std::vector<ConnectionPtr> open_connections_;
  // When each lane's last chunk so far was verified here, seconds from the start: logged when
  // done (the lanes' spread is what an uneven network costs a plan of many lanes).
  std::vector<double> lane_last_chunk_s_;

  mutable std::mutex mutex_;
  ExecutionState state_ = ExecutionState::kPrepared;  // guarded by mutex_
  std::string error_;                                 // guarded by mutex_
  Digest digest_{};                                   // guarded by mutex_
  double finished_s_ = 0;                             // guarded by mutex_
  bool forwarding_done_ = false;                      // guarded by mutex_
  std::vector<std::pair<LaneTrouble, std::string>> lane_trouble_;  // guarded by mutex_
  int patch_version_ = 0;                                          // guarded by mutex_
  bool stop_requested_ = false;                       // guarded by mutex_
  // steady_clock nanoseconds of the first NotePayloadSent(); 0 = none yet. Atomic: the send
  // path checks it per chunk without the mutex.
  std::atomic<int64_t> first_payload_sent_ns_{0};
};

}  // namespace gridcast
