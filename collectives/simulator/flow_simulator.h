// The flow-level fast engine of SimulatePlan (simulator.h).
//
// Every lane edge is one long-lived flow carrying the lane's bytes. Steady-state throughputs
// are the max-min fair rates (max_min_fair.h) where an edge is also capped by the flow that
// feeds its parent (it cannot forward a lane faster than it receives it) and by its window
// (window · chunk / (chunk / rate + delay)). A member then holds a lane at
//
//   sum over the hops from the lane source of (chunk / burst rate + delay)   (pipeline fill)
//   + (lane bytes - chunk) / throughput of its own edge                     (steady stream)
//
// where the burst rate of a hop is what it gets while transmitting: its resources' capacity
// left by the other flows' steady throughputs. This matches the chunk-level engine when every
// edge streams for most of the broadcast (lanes of many chunks); it is an approximation when
// lanes carry few chunks over long paths (their edges are not busy at the same time).
//
// Complexity: O(F · L · log F) for F lane edges crossing L resources each, independent of the
// number of chunks. Pure; thread-safe.
#pragma once

#include "collectives/plan.h"
#include "collectives/simulator/sim_setup.h"
#include "collectives/simulator/simulator.h"

namespace gridcast {

// REQUIRES: setup == BuildSimSetup(plan, net, options).value().
SimResult SimulateFlowLevel(const Plan& plan, const NetworkModel& net, const SimSetup& setup,
                            const SimOptions& options);

}  // namespace gridcast
