// The flow-level fast engine of SimulatePlan (simulator.h): a fluid simulation of lane edges.
//
// Every lane edge is one flow that carries the lane's bytes as a fluid instead of chunk by
// chunk. A flow starts when its parent holds the lane's first chunk, and its child's flows
// start once that chunk has fully arrived, so pipeline fill is paid per hop as in the chunk
// level. Flows share resources max-min fairly (max_min_fair.h), each also capped by its
// window (window · chunk / (chunk / rate + delay), for lanes longer than the window).
// Store-and-forward bounds how far a flow may have sent, in one of two ways:
// * Trailing (lanes that stream, in plans of one stream count): the first chunk at once; then
//   as far as trailing its feeder by the time it takes to send one chunk itself (a flow faster
//   than its feeder sends each chunk in a burst, so it trails by less than a chunk; when it
//   catches up it is held to its feeder's rate); everything but the last chunk once the feeder
//   is into its last chunk; the last chunk once the feeder's last byte has arrived. The
//   per-message overhead caps such a flow at one chunk per (overhead + transmission at the
//   fastest rate of its path). Events: a flow starts, sends its first chunk, catches up, is
//   released for its last chunk, or ends — a few per flow, whatever the number of chunks.
// * Stepped (the other lanes): the whole chunks its parent holds, each arriving one delay
//   after the feeder has sent its last byte, with the per-message overhead as a pause before
//   each chunk. That is the chunk level's own rule, so a stepped flow is idle whenever its
//   parent has nothing new and its share goes to the other flows, as chunk by chunk. It costs
//   an event per chunk boundary (flows that cross theirs together share one).
// A lane streams when it carries at least 16 chunks per hop of its deepest path (with 8, the
// trailing fluid was still 2.6% slow on a scatter-allgather of 128-chunk lanes over 16 hops).
// The trailing fluid is off on the others, where lanes of few chunks interleave at the nodes
// they share (scatter-allgather's rings: up to 18% slow at 3 chunks over 16 hops), and on
// plans mixing stream counts, where a many-stream edge squeezes the other edges of its sender
// whenever it has a chunk (the trailing fluid was 25% fast on a 4-stream WAN plan, as its fed
// edge follows its feeder's rate instead).
// SimOptions::flow_trail_short_lanes drops the depth from that rule for plans of one stream
// count (auto, above 256 members): lanes of at least 16 chunks trail however deep their paths
// (within 0.2% of the chunk level on the agreement grid, where they used to be stepped), so a
// deep tree costs a few events per level instead of one per chunk boundary.
// Events closer together than SimOptions::flow_merge_fraction of the elapsed time are handled
// as one.
//
// Accuracy: within 3% of the chunk level on every registered broadcast planner, 2 to 33
// members, flat, two-site and mixed-NIC networks, 1, 4 and mixed stream counts, with and
// without the per-message overhead (engine_agreement_test.cc; at most 0.2% there).
//
// Complexity: O(K · F · L · log F) for F lane edges crossing L resources each and K distinct
// event times. For trailing lanes K is independent of the number of chunks: a few per tree
// level when members are alike (10,000 members, two lanes, 1024 chunks: 0.17 s) but it grows
// with lanes x hops for many-lane plans, whose flows catch up with their feeders one after
// another (16 streaming lanes of scatter-allgather-rd on 16 members: some 5 s, where stepping
// or the chunk level take 0.6 s). For stepped lanes K grows with chunks + hops when members
// are alike (a 10,000-member chain of 1024 chunks: 3.1 s) and up to chunks x edges.
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
