// What the parts of one plan's execution share: the options, the plan, the store and the
// lane schedule, and the few things only the execution itself does (ExecutionHost). The parts
// follow the data: a LaneSender per outgoing stream (lane_sender.h), the ChunkIntake for
// incoming ones (chunk_intake.h), ParentWatch judging whether each lane still arrives
// (parent_watch.h), and LaneRepair for a hybrid plan's stalled lanes (lane_repair.h).
// PlanExecution (plan_execution.h) owns them all.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <algorithm>
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/plan.h"
#include "daemon/executor/digest_stream.h"
#include "daemon/executor/lane_schedule.h"
#include "daemon/metrics/daemon_counters.h"
#include "daemon/store/payload_store.h"
#include "daemon/transport/connection.h"
#include "daemon/transport/frame.h"
#include "daemon/transport/notifier.h"

namespace gridcast {

struct ExecutionOptions {
  std::string secret;
  // What connections to children are opened on (tcp, tls or loopback); the daemon's, shared
  // with its DataPlane. Required.
  std::shared_ptr<DataTransport> transport;
  // Unacknowledged chunks per connection (or the plan's window, if smaller; and never more
  // than kWindowBytes of them: ChunksWithin). More hides latency; each costs a chunk on restart.
  uint32_t window_chunks = 8;
  // Idle chunk buffers kept for reuse (buffers in use are bounded by the windows), and never
  // more than kWindowBytes of them.
  size_t cache_chunks = 32;
  // Received chunks forwarded to every child are written back and leave the page cache beyond
  // this many bytes (ReceiveOptions::page_cache_window_bytes of the stores received into on a
  // disk); 0 leaves the page cache to the kernel.
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
  // Push and hybrid plans: a lane whose parent has no connection open, or sends no byte and no
  // keepalive, for this long is reported to the source (ParentWatch, parent_watch.h).
  std::chrono::milliseconds parent_silent = std::chrono::seconds(1);
  // The daemon's counters (bytes per peer, chunks, plan outcomes); null counts nothing.
  std::shared_ptr<DaemonCounters> counters;
};

// How often a parent waiting for a chunk tells its children it is alive (KEEPALIVE frames):
// well within the time after which they call it silent, and within their I/O timeout.
inline std::chrono::milliseconds KeepaliveInterval(const ExecutionOptions& options) {
  return std::clamp(std::min(options.repair_stall, options.parent_silent) / 4, std::chrono::milliseconds(50),
                    options.io_timeout / 4);
}

// What the parts ask of the execution they belong to. Every call on the io thread unless said.
class ExecutionHost {
 public:
  virtual ~ExecutionHost() = default;
  // Runs `task` on the io thread, keeping the execution (and with it every part) alive until
  // the task ends.
  virtual void Spawn(boost::asio::awaitable<void> task) = 0;
  // Any thread: runs `work` on the worker pool, or on the io thread, the execution kept alive.
  virtual void OnWorkers(std::function<void()> work) = 0;
  virtual void OnIo(std::function<void()> work) = 0;
  // Any thread: a stop was requested or the execution failed.
  virtual bool Stopping() const = 0;
  virtual void Fail(const Status& status) = 0;
  // Remembers a connection so that a stop closes it (at once when stopping already).
  virtual void Track(const ConnectionPtr& connection) = 0;
  // Any thread: payload bytes are about to leave for a peer (the first call is remembered).
  virtual void NotePayloadSent() = 0;
  // `child` holds `chunk` of `lane` (acknowledged, or in its bitmap).
  virtual void Delivered(int lane, int child, uint64_t chunk) = 0;
  // A chunk that came in `lane` is verified and stored; `newly`: this write marked it (false
  // when another path verified it first). `data` is the buffer it came in, or empty (in place).
  virtual void ChunkStored(int lane, uint64_t chunk, std::span<const uint8_t> data, bool newly) = 0;
};

// Payload bytes moved by push, both ways (the execution's snapshot reports them).
struct PushTraffic {
  std::atomic<uint64_t> sent_bytes{0};
  std::atomic<uint64_t> received_bytes{0};
};

class LaneRepair;
class ParentWatch;

// The bytes of chunks a connection may have unacknowledged, and a member may keep idle for
// reuse, whatever the counts above say (at least two chunks): the largest chunks (4 MiB, which
// payloads of 8 GiB and more get) made eight per connection and 32 idle ones, 160 MiB and more
// per member; with it a terabyte broadcast takes about what a gigabyte one does (64 MiB per
// member at most: issue 52). Chunks of 2 MiB and less are not bound by it.
inline constexpr uint64_t kWindowBytes = uint64_t{16} << 20;

// At most `chunks` chunks of `chunk_bytes`, and kWindowBytes of them (at least two).
inline uint64_t ChunksWithin(uint64_t chunks, uint64_t chunk_bytes) {
  return std::min<uint64_t>(chunks, std::max<uint64_t>(2, kWindowBytes / std::max<uint64_t>(chunk_bytes, 1)));
}

struct ExecutionContext {
  boost::asio::io_context& io;
  boost::asio::thread_pool& workers;
  const Plan& plan;
  const PlanId id;
  // By whole-plan index, the members this member deals with (the plan slice's, and those plan
  // patches named since): their names and data addresses; empty for the others.
  const std::vector<std::string>& names;
  const std::vector<std::string>& data_addresses;
  const std::shared_ptr<PayloadStore>& store;
  // What the store offers beyond its chunks, asked for once.
  const StoreCapabilities capabilities;
  const ExecutionOptions& options;
  // The smaller of the daemon's window and the plan's, within kWindowBytes.
  const uint32_t window_chunks;
  LaneSchedule& schedule;
  LaneRepair& repair;
  ParentWatch& watch;
  PushTraffic& traffic;
  // A chunk was stored or logged, or (shared lanes) a connection to a child was handed its next.
  Notifier& chunk_arrived;
  ExecutionHost& host;
  // The plan's signed batches of chunk digests; null when it streams none.
  DigestStream* const digests;

  // The daemon's counters of the bytes exchanged with `member` by push; null without counters.
  PeerTraffic* PushTrafficWith(int member) const {
    return options.counters ? &options.counters->Peer(names[member], Transport::kPush) : nullptr;
  }
};

}  // namespace gridcast
