// The flow-level fast engine of SimulatePlan (simulator.h): a fluid simulation of lane edges.
//
// Every lane edge is one flow that carries the lane's bytes as a fluid instead of chunk by
// chunk. A flow starts when its parent holds the lane's first chunk, and its child's flows
// start once that chunk has fully arrived, so pipeline fill is paid per hop as in the chunk
// level. Store-and-forward bounds how far a flow may have sent: the first chunk at once; then
// as far as trailing its feeder by the time it takes to send one chunk itself (a flow faster
// than its feeder sends each chunk in a burst, so it trails by less than a chunk; when it
// catches up it is held to its feeder's rate); everything but the last chunk once the feeder
// is into its last chunk; the last chunk once the feeder's last byte has arrived. Flows share
// resources max-min fairly (max_min_fair.h), each also capped by its window (window · chunk /
// (chunk / rate + delay), for lanes longer than the window). Rates change only at events: a
// flow starts, sends its first chunk, catches up, is released for its last chunk, or ends.
// Events closer together than SimOptions::flow_merge_fraction of the elapsed time are handled
// as one.
//
// The per-message overhead holds an edge before each chunk, so it caps the flow at one chunk
// per (overhead + transmission at the fastest rate) of its path.
//
// Accuracy: within 3% of the chunk level on every plan FlowLevelFits() accepts (chains, flat,
// binary, binomial and k-nomial trees, two-lane and k-tree plans, capacity's packings, on one
// switch, mixed NICs and two sites; engine_agreement_test.cc). Outside it (simulator.h says
// why): lanes of few chunks per hop (scatter-allgather's shape), where it is pessimistic by
// up to 19% in the test grid and +30% to 5x on longer rings, and plans mixing stream counts,
// where it is optimistic (25% for 4-stream WAN edges beside 1-stream ones). kAuto prefers the
// chunk level for both.
//
// Complexity: O(K · F · L · log F) for F lane edges crossing L resources each and K distinct
// event times, independent of the number of chunks. K is a few per tree level when members
// are alike (10,000 members, two lanes, 1024 chunks: 0.25 s) but grows with the number of
// hops for paths (a 10,000-member chain: 9.5 s) and with lanes x hops for many-lane plans.
// Pure; thread-safe.
#pragma once

#include "collectives/plan.h"
#include "collectives/simulator/sim_setup.h"
#include "collectives/simulator/simulator.h"

namespace gridcast {

// REQUIRES: setup == BuildSimSetup(plan, net, options).value().
SimResult SimulateFlowLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                            const SimOptions& options);

}  // namespace gridcast
