#include "collectives/simulator/simulator.h"

#include "collectives/simulator/chunk_simulator.h"
#include "collectives/simulator/flow_simulator.h"
#include "collectives/simulator/sim_setup.h"

namespace gridcast {

Result<SimResult> SimulatePlan(const Plan& plan, const NetworkModel& net, const SimOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(SimSetup setup, BuildSimSetup(plan, net, options));
  SimMode mode = options.mode;
  if (mode == SimMode::kAuto) {
    uint64_t transfers = 0;
    for (size_t l = 0; l < plan.lanes.size(); ++l) {
      transfers += plan.lanes[l].ChunkCount() * (setup.lane_edge_begin[l + 1] - setup.lane_edge_begin[l]);
    }
    mode = transfers <= options.max_chunk_transfers ? SimMode::kChunkLevel : SimMode::kFlowLevel;
  }
  if (mode == SimMode::kChunkLevel) return SimulateChunkLevel(plan, net, setup, options);
  return SimulateFlowLevel(plan, net, setup, options);
}

}  // namespace gridcast
