// The flow-level fast engine of SimulatePlan (simulator.h): a fluid simulation of lane edges.
//
// Every lane edge is one flow that carries the lane's bytes as a fluid instead of chunk by
// chunk. A flow starts when its parent holds the lane's first chunk (the first chunk reached
// it over the feeding edge) and its child may forward once the first chunk has fully arrived,
// so pipeline fill is paid per hop as in the chunk-level engine. While the feeding edge is
// still sending, a flow stays one chunk behind it (it cannot forward what has not arrived;
// when it catches up it is held to its feeder's rate); its last chunk can go only once the
// feeder's last byte has arrived. Active flows share resources max-min fairly
// (max_min_fair.h), also capped by their window (window · chunk / (chunk / rate + delay)).
// Rates change only at events: a flow starts, sends its first chunk, catches up with its
// feeder, is released for its last chunk, or ends. Events closer together than
// `SimOptions::flow_merge_fraction` of the elapsed time are handled as one.
//
// Complexity: O(K · F · L · log F) for F lane edges crossing L resources each and K distinct
// event times, independent of the number of chunks. K is a few per tree level when members
// are alike (10,000 members, 1024 chunks, two lanes: well under a second) and at most about
// 5 F when every member differs. Agrees with the chunk-level engine within a few percent
// (the fluid ignores chunk granularity inside a stream). Pure; thread-safe.
#pragma once

#include "collectives/plan.h"
#include "collectives/simulator/sim_setup.h"
#include "collectives/simulator/simulator.h"

namespace gridcast {

// REQUIRES: setup == BuildSimSetup(plan, net, options).value().
SimResult SimulateFlowLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                            const SimOptions& options);

}  // namespace gridcast
