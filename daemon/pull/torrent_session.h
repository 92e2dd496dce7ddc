// TorrentSession: this daemon's one libtorrent session, and the swarms of its pull and hybrid
// plans.
//
// Settings (what was measured to matter, issue 5): TCP only (uTP, DHT, LSD, UPnP, NAT-PMP and
// peer exchange off: the control plane is the tracker), whole_pieces_threshold 0 (otherwise
// fast peers ignore piece priorities), request_queue_time 1 s, unlimited upload slots. Each
// member's peer id is derived from its name, so received blocks are attributed to members
// even on one loopback address. Payload bytes go through PayloadStore (store_disk_io.h).
//
// A striped swarm (collectives/planners/swarm.h) keeps the source to about one copy per
// group: each member believes the source holds only its stripe (the member ignores the
// source's have-all; the source sends HAVEs for that member's stripe), so it can ask the
// source for nothing else; a chunk outside its stripe becomes wanted once a peer other than
// the source announces it. If nothing arrives for `stall_timeout` (a peer died with its
// stripe), the member reconnects to the source, believes it in full, and wants everything.
//
// Observations: every received block is attributed to its sender (block_finished_alert) and
// binned in time; PullSwarm::Report() returns them.
//
// A hybrid member's swarm seeds what the push trees delivered (the executor announces each
// chunk) and downloads only the chunks the executor asks for with Fetch() when a tree stalls.
//
// Interop: ServeTo() seeds a complete payload to one standard BitTorrent client (aria2c,
// transmission) by dialling it, redialling while it is not connected, and follows how many
// pieces the client announces. Thread-safe.
//
// Where each concern lives: the session, its alerts and the swarms' observations here; a
// member's plugins (the stripe gate, pieces every peer holds) in member_plugins.h; the
// source's (dealing, stripes) in source_side.h; the outside client's in client_serve.h; disk
// I/O in store_disk_io.h.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/plan.h"
#include "common/ids.h"
#include "include/gridcast/result.h"
#include "daemon/executor/swarm.h"
#include "daemon/metrics/daemon_counters.h"
#include "daemon/store/payload_store.h"

namespace gridcast {

struct TorrentSessionOptions {
  std::string member_name;     // this daemon's name: its peer id
  std::string listen_address;  // "ip:port" for BitTorrent
  // libtorrent's own defaults (TCP only and no discovery still): the baseline benchmarks
  // compare against.
  bool libtorrent_defaults = false;
  // Peers uploaded to at once (libtorrent's unchoke slots). -1: as the plans of the swarms
  // this daemon runs say (SwarmMember::upload_slots: fewer on slow uplinks), else every
  // interested peer; any other value overrides the plans.
  int upload_slots = -1;
  std::chrono::milliseconds stall_timeout = std::chrono::seconds(3);
  double bin_s = 0.25;         // width of the observation time bins
  // Counts the swarms' bytes per peer and their refused pieces; null counts nothing.
  std::shared_ptr<DaemonCounters> counters;
};

struct SwarmJoin {
  PlanId plan_id;                      // the swarm runs on the plan's torrent (plan_torrent.h)
  std::shared_ptr<PayloadStore> store;
  Plan plan;                           // mode kPull or kHybrid
  int self = 0;                        // this member's index in the plan
  std::vector<std::string> bt_addresses;  // per member, "ip:port"
  std::function<void(bool newly)> on_chunk_verified;  // any thread; TorrentStorage's
  // A pull member: called (on the network thread) once this member holds `chunk` and every
  // peer of its swarm but the source has announced it too. Unset: not reported.
  std::function<void(uint64_t chunk)> on_chunk_shared;
  // Called once (network thread) when the first payload block is read to be sent to a peer.
  std::function<void()> on_first_upload;
  // The member looks for chunks it holds already (an earlier copy, a resume) as their digests
  // come: it wants a piece only once PullSwarm::LookedThrough passed it, or, in a swarm
  // without stripes, joins only then.
  bool looks_first = false;
};

// A payload served to one outside client, as far as the client's own messages tell.
struct ServeProgress {
  uint64_t pieces_total = 0;
  uint64_t payload_bytes = 0;
  uint64_t client_pieces = 0;    // pieces the client announced having (bitfield, have)
  uint64_t uploaded_bytes = 0;   // payload bytes sent to it
  bool requested_all = false;    // the client asked for every block at least once
  bool interested = false;       // it still wants something
  bool connected = false;

  // Clients need not announce their last pieces to a seed: transmission batches HAVE messages
  // and hangs up on a seed as soon as it is one. So a client is also done when it has asked
  // for and been sent every block, and then lost interest or hung up.
  bool Complete() const {
    return pieces_total > 0 && (client_pieces == pieces_total ||
                                (requested_all && !interested && uploaded_bytes >= payload_bytes));
  }
};

class ClientServe {
 public:
  virtual ~ClientServe() = default;
  virtual ServeProgress Progress() const = 0;
  // Disconnects the client and drops the torrent; idempotent.
  virtual void Stop() = 0;
};

class TorrentSession {
 public:
  // Starts the session and listens. Unavailable when the address cannot be bound.
  static Result<std::unique_ptr<TorrentSession>> Start(TorrentSessionOptions options);
  ~TorrentSession();
  TorrentSession(const TorrentSession&) = delete;
  TorrentSession& operator=(const TorrentSession&) = delete;

  // The bencoded BitTorrent v1 .torrent of a complete payload: one file called `file_name`,
  // piece = chunk (a power of two of at least 16 KiB). Reads the whole payload once (SHA-1).
  static Result<std::string> MakeTorrent(const PayloadStore& store, const std::string& file_name);
  // The magnet link of a .torrent.
  static Result<std::string> MagnetLink(const std::string& torrent);

  // Adds the plan's placeholder torrent (plan_torrent.h) for the store's payload, paused until
  // PullSwarm::Start(); verified chunks are announced as held.
  Result<std::shared_ptr<PullSwarm>> Join(SwarmJoin join);

  // Seeds a complete payload to one outside BitTorrent client waiting at `address` ("ip:port";
  // `torrent` is the payload's MakeTorrent(), checked against the store;
  // it dials the client, no tracker) until Stop(). AlreadyExists while this session already
  // has the torrent (another serve of it, or a pull plan's swarm).
  Result<std::shared_ptr<ClientServe>> ServeTo(const std::string& torrent,
                                               std::shared_ptr<PayloadStore> store,
                                               const std::string& address);

  // InvalidArgument unless `address` is "ip:port" (what ServeTo() can dial).
  static Status CheckPeerAddress(const std::string& address);

 private:
  class Impl;
  explicit TorrentSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The fixed 20-byte BitTorrent peer id of a member.
std::string PeerIdForMember(const std::string& member_name);

}  // namespace gridcast
