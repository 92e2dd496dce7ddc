// mesh2d (all-to-all multicast): the 2-D virtual mesh combining strategy ([A2A] §3.1).
// Members are laid out row-major in a grid of cols = ceil(sqrt p) columns and rows = ceil(p /
// cols) rows, so the holes are the tail of the last row and no row is empty (algorithms.md
// §4.3 PROPOSAL; for p = 14 this is the paper's 4x4 grid with two holes). Lane i: member i
// = (r, c) sends its message along its row (columns c+1, c+2, ... wrapping) and then down its own
// column; each row peer forwards it down its column (rows below it first, wrapping). When the
// row peer (r, k) is a hole, the message goes to (c mod (rows-1), k) instead, as the paper
// says: in the 4x4 grid with two holes, member 12 = (3, 0) sends to members 2 and 3.
// The Plan pipelines chunks instead of combining whole messages per phase, so "phase 2 sends
// the combined row" becomes "every member forwards each row peer's chunks down its column".
// Cost: [A2A] equation 3, T ≈ 2√P·α + Pm(β_em + γ + C_mesh) + √P·mδ; holes do not change it.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class AllToAllMesh2dPlanner : public Planner {
 public:
  std::string name() const override { return "mesh2d"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
