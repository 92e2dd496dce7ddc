// auto: picks the broadcast planner, chunk size and stream count for a network by simulating
// candidates on its model (flow-level engine, simulator.h), and records why in the Plan.
//
// Search, in two stages, to stay within a second or two up to 10,000 members:
//   1. every registered broadcast planner at the first-guess chunk size and stream count
//      (options.chunk_bytes and options.streams); planners of many slow lanes (tried up to
//      kMaxManyLanesSize members) also at the per-size default chunk
//      (Planner::DefaultChunkBytes) when it may choose the chunk;
//   2. the kFinalists best of stage 1 at each stream count (the first guess, then 1, 2 and 4
//      while they help; only with options.choose_streams and when the network has switch
//      uplinks), walking the candidate
//      chunk sizes (kChunkSizes, those not above the payload nor below the smaller of 256 KiB
//      and the per-size default; only with
//      options.choose_chunk_bytes) from the first guess towards smaller ones while that is
//      faster, else towards larger ones.
// A candidate is simulated only if its lower bound (PlanLowerBoundSeconds) is not above the
// best prediction so far; the rationale says how many were ruled out that way.
// The shortest predicted time wins (a planner of many slow lanes only by more than kNearTie);
// ties go to the candidate tried first, so the result is deterministic. Candidates are simulated with the daemon's per-chunk overhead
// (kDaemonPerChunkOverheadS, simulator.h): every chunk costs it on every hop, so the chunk
// size trades pipeline fill (chunk / rate per hop, smaller is better) against chunks x
// overhead (larger is better). The returned Plan is the winner's, with `algorithm` = the
// winning planner's name and `rationale` = e.g. "multilane-sites 1MiB: 21.6 s predicted,
// efficiency 0.97; next: capacity 22.0 s, chain 23.1 s; chunk 1MiB (50 us per chunk per hop
// against pipeline fill): 512KiB 21.7 s, 2MiB 21.8 s". Pure; thread-safe.
#pragma once

#include <algorithm>

#include <array>
#include <cstdint>

#include "collectives/planner.h"
#include "collectives/validate_plan.h"

namespace gridcast {

class AutoPlanner : public Planner {
 public:
  // Those below 256 KiB only down to the per-size default (Planner::DefaultChunkBytes, about
  // 2048 chunks): on deep trees over slow links small chunks shorten the pipeline fill, and
  // the model undervalues that (docs/scale.md: 64 members at 10mbit, 32 MiB, splitstream:2
  // measured 0.747 of the bound at 256 KiB and 0.911 at 64 KiB).
  static constexpr std::array<uint64_t, 8> kChunkSizes = {64 << 10, 128 << 10, 256 << 10, 512 << 10,
                                                          1 << 20,  2 << 20,   4 << 20,   8 << 20};
  static constexpr int kFinalists = 3;
  // A planner of many slow lanes must be predicted faster than the others by more than this
  // to be chosen: the model does not see the TCP stalls that cost such plans on the netgrid
  // (two-sites, 256 MiB: upload-packing predicted 0.1% faster than multilane-sites, measured
  // 1.052-1.061 of the bound against 1.047-1.049).
  static constexpr double kNearTie = 0.01;
  // Above this many members, planners with one lane per member are not tried.
  static constexpr size_t kMaxLanePerMemberSize = 64;
  // Above this many members, planners with many slow lanes (upload-packing) are not tried: at
  // 10,000 members simulating their plans took auto from 0.9-1.5 s to 2-7 s.
  static constexpr size_t kMaxManyLanesSize = 1000;

  std::string name() const override { return "auto"; }
  // The first guess, before the search (options.choose_chunk_bytes) tries kChunkSizes.
  uint64_t DefaultChunkBytes(uint64_t payload_bytes) const override {
    return std::max<uint64_t>(1 << 20, SmallestChunkBytes(payload_bytes, /*swarm=*/false));
  }
  // Errors: ResolveRanks's (bad source, members, chunk size or streams).
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
