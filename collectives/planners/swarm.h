// swarm: a pull (BitTorrent) plan with a coordinator's piece schedule.
//
// Left to themselves, BitTorrent downloaders ask the seed for the same pieces at once and the
// seed sends 1.6-2 copies (measured with libtorrent's defaults). Here the members are split
// into bandwidth groups (collectives/bandwidth_groups.h); inside a group every member takes a
// disjoint stripe of chunks from the source and everything else from the group's other
// members, with whom it peers. So the source sends one copy per group and each bottleneck
// between groups carries about one copy. With `free_choice` (tomography's measurements) there
// are no stripes and everyone peers with everyone. Where the source's upload cannot seed a
// copy per group near the bound, it seeds one copy in all and groups trade chunks across
// (SwarmSeeding::kAsTheSourceCan, pull's); a hybrid's repair swarm keeps a copy per group
// (kCopyPerGroup), so that a group cut off from the others still finishes from the source.
// Chunks are BitTorrent pieces: a power of two of at least 16 KiB. Pure; thread-safe.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

enum class SwarmSeeding { kAsTheSourceCan, kCopyPerGroup };

class SwarmPlanner : public Planner {
 public:
  explicit SwarmPlanner(bool free_choice = false, SwarmSeeding seeding = SwarmSeeding::kAsTheSourceCan)
      : free_choice_(free_choice), seeding_(seeding) {}
  std::string name() const override { return free_choice_ ? "swarm-free" : "swarm"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

  // A piece size for `payload_bytes`: small pieces shorten the tail (the last pieces of each
  // stripe still have to reach every peer; on netgrid, 64 KiB pieces finished 64 MiB 5% sooner
  // than 256 KiB ones), but cost per-piece work, so at most about 4096 pieces: 64 KiB up to
  // 256 MiB, then larger, at most 16 MiB.
  uint64_t DefaultChunkBytes(uint64_t payload_bytes) const override;

 private:
  bool free_choice_;
  SwarmSeeding seeding_;
};

}  // namespace gridcast
