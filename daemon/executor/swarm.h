// PullSwarm: what a PlanExecution needs of the BitTorrent side of a pull or hybrid plan.
//
// daemon/pull implements it on libtorrent; this interface keeps libtorrent's headers out of the
// executor. A swarm writes into the same PayloadStore as the push path and reports each chunk
// it verified through the callback it was created with.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gridcast {

// Bytes this member received from one peer during the broadcast (tomography's input).
struct PeerReceipt {
  std::string from;                     // the sending member's name
  uint64_t bytes = 0;
  uint64_t blocks = 0;                  // BitTorrent blocks (16 KiB)
  double first_s = 0, last_s = 0;       // since this member started
  std::vector<uint64_t> bytes_per_bin;  // bytes in [k * bin_s, (k + 1) * bin_s)
};

struct SwarmReport {
  double bin_s = 0;
  std::vector<PeerReceipt> received;
  uint64_t uploaded_bytes = 0;          // payload bytes this member sent to peers
};

class PullSwarm {
 public:
  virtual ~PullSwarm() = default;
  // Connect to the peers and begin exchanging chunks.
  virtual void Start() = 0;
  // Leave the swarm; idempotent. Verified chunks stay in the store.
  virtual void Leave() = 0;
  // Hybrid plans: fetch these chunks from peers (the push tree that carries them stalled).
  virtual void Fetch(const std::vector<uint64_t>& chunks) = 0;
  // The push path verified `chunk` (hybrid plans), or the member found it in its earlier
  // copy: announce it to the peers.
  virtual void ChunkVerifiedByPush(uint64_t chunk, std::span<const uint8_t> data) = 0;
  // A member that looks for chunks it holds already (SwarmJoin::looks_first): it looked
  // through every chunk below `end`, and may fetch those it lacks.
  virtual void LookedThrough(uint64_t end) = 0;
  virtual SwarmReport Report() const = 0;
};

}  // namespace gridcast
