// sssmst: the SSS-MST inter-switch broadcast of [SMP] (algorithms.md §2). One lane.
//
// 1. Dijkstra over the switch graph from the source's switch. The weight of crossing an uplink
//    in one direction is the time to send one chunk across it: chunk_bytes·8 / rate + latency
//    (a chunk is the unit that is forwarded, so this is the per-hop cost of the pipeline). The
//    "working" switches (those with members) form G_w; a working switch's parent in the
//    shortest-path tree T_w is its nearest working ancestor, and the edge weighs the path
//    between them (the default route R_cluster).
// 2. One leader per working switch: the member with the highest upload rate (the source leads
//    its own switch; ties go to the lower rank). Only leaders send across switches.
// 3. Down-to-up (§2.3): children are sent to in descending order of their subtree's
//    latest-delivery weight w(p) (the paper's key), or of Σ_u = w(p)_u + w(v,u) + startup(u)
//    (the REVIEW key) when Options::order_key says so.
// 4. Up-to-down (§2.4): a BFS round, then a DFS round, of the paralleling procedure, which moves
//    children of a one-port sender that serves several switches in turn to other leaders that
//    already hold the data, within the link channel limits.
// 5. Inside a switch the leader reaches its members with a binomial tree (the intra-switch
//    level), after its inter-switch sends.
//
// startup(v), the time v's leader is busy per send under the one-port model, is one chunk at
// the leader's upload rate: chunk_bytes·8 / up_bps (0 when unshaped). Pure; thread-safe.
#pragma once

#include "collectives/planner.h"

namespace gridcast {

class SssMstPlanner : public Planner {
 public:
  enum class OrderKey {
    kSubtreeWeight,  // w(p) of the child, as the paper says
    kDeliveryWeight  // Σ_u: w(p) plus the link to the child and the child's start-up
  };

  struct Options {
    // The send-order key of the down-to-up step.
    OrderKey order_key = OrderKey::kSubtreeWeight;
    // Concurrent transfers one uplink direction carries ("a couple of channels" per link,
    // [SMP] 2). The paralleling procedure never routes a new path over a full link.
    int channels_per_link = 2;
  };

  SssMstPlanner() = default;
  explicit SssMstPlanner(Options options) : options_(options) {}

  std::string name() const override { return "sssmst"; }
  Result<Plan> MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                        const PlanOptions& options) const override;

 private:
  Options options_;
};

}  // namespace gridcast
