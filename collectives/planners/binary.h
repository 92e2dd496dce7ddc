// binary: pipelined binary tree with heap numbering over ranks (rank 0 = source; the children of
// rank r are 2r+1 and 2r+2, sent in that order). One lane carries every chunk.
// Cost (Hockney, [ML] 1.2): log p·l + 2M/b pipelined: each interior member splits its upload
// between two children, and the leaves (about half the members) never send.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class BinaryPlanner : public Planner {
 public:
  std::string name() const override { return "binary"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;
};

}  // namespace gridcast
