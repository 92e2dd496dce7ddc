// scatter-allgather and scatter-allgather-rd: van de Geijn's broadcast. A binomial scatter gives
// owner o (rank o, o = 0..p-1) its block of the payload, then an allgather hands every block to
// everyone: around a ring (scatter-allgather, MPICH's path for large messages and any p) or by
// recursive doubling (scatter-allgather-rd, MPICH's medium-message path).
//
// How the Plan encodes it: one lane per owner, lane o carrying block o = ContiguousChunks(n, p,
// o), all rooted at the source (rank 0). With fewer chunks than members only ranks 0..n-1 own a
// block (one chunk each) and get a lane. Lane o's tree is block o's journey:
//   - the scatter: the path 0 -> ... -> o down the binomial tree (KnomialPath(o, 2)); the members
//     on it hold block o afterwards (in MPICH they forward it as part of their subtree's data);
//   - ring allgather: o -> o+1 -> o+2 ... (mod p), skipping the members on the scatter path, so
//     the lane is one path through all members. MPICH's ring passes the block to the path
//     members again; a Plan delivers each chunk once, so they are skipped;
//   - recursive doubling: dimension exchange from o (AddDimensionExchange): in stage s every
//     holder sends to its neighbour across dimension s, and path members, who already hold the
//     block, only forward. Non-power-of-two p, our variant: with q the largest power of two <= p,
//     an owner o >= q is served in the q-cube by its scatter parent o - q (the binomial parent of
//     a rank >= q is always rank - q), the exchange runs in the q-cube, and then each cube member
//     c < p - q hands the block to c + q (as [A2A] §3.2 does for "extra nodes"). This costs one
//     extra hop at the end, instead of MPICH's fallback to the ring for such p.
// What the Plan cannot express: the phases are not separated. A member forwards a chunk as soon
// as it has it, so the allgather of one block overlaps the scatter of the next, and blocks flow
// concurrently in their lanes instead of in the lock-step rounds of the MPI algorithm (no
// barriers, no "send everything I hold so far" message combining: each chunk travels alone).
// Cost (Hockney, [ML] 1.2, corrected): 2·log p·l + 2(p-1)/p·M/b (the paper prints p/(p-1)).
// The ring allgather's latency term is (p-1)·l instead of log p·l.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class ScatterAllgatherPlanner : public Planner {
 public:
  enum class Allgather { kRing, kRecursiveDoubling };

  explicit ScatterAllgatherPlanner(Allgather allgather) : allgather_(allgather) {}
  std::string name() const override {
    return allgather_ == Allgather::kRing ? "scatter-allgather" : "scatter-allgather-rd";
  }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  Allgather allgather_;
};

}  // namespace gridcast
