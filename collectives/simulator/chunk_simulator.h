// The chunk-level reference engine of SimulatePlan (simulator.h).
//
// Discrete events: every chunk on every lane edge is one transfer. Between events the set of
// transfers being transmitted is fixed and shares the resources max-min fairly (recomputed at
// every change, max_min_fair.h); a transfer's chunk arrives delay_s after its last byte left.
// An edge transmits its chunks in lane order, one at a time, with at most window_chunks in
// flight; a member starts forwarding a chunk when it has arrived, to its children in order.
// Ties are broken by start order, so runs are deterministic.
//
// Complexity: O(T · F · L · log F) for T chunk transfers, at most F transmitting at once,
// crossing L resources each (each event re-solves the sharing and advances every transfer).
// About 10^5 transfers take 1-3 s (100 members, 1024 chunks). Pure; thread-safe.
#pragma once

#include "collectives/plan.h"
#include "collectives/simulator/sim_setup.h"
#include "collectives/simulator/simulator.h"

namespace gridcast {

// REQUIRES: setup == BuildSimSetup(plan, net, options).value().
SimResult SimulateChunkLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                             const SimOptions& options);
// The same from `start` (REQUIRES: it fits the plan: a row per member of a column per lane,
// each within its lane's count; `absent` empty or one per member). FailedPrecondition naming a
// member that is not absent and never holds everything (a parent of it is absent).
Result<SimResult> SimulateChunkLevelFrom(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                                         const SimOptions& options, const SimStart& start);
// What each member holds `until_s` into SimulateChunkLevelFrom's run.
SimStart ChunkLevelStateAt(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                           const SimOptions& options, const SimStart& start, double until_s);

}  // namespace gridcast
