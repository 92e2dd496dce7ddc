#include "collectives/planners/planner_util.h"

#include <algorithm>

namespace gridcast {

Result<Ranks> ResolveRanks(const NetworkModel& net, const PlanOptions& options) {
  const int n = static_cast<int>(net.nodes.size());
  const int source = options.source < 0 ? net.source : options.source;
  if (source < 0 || source >= n) {
    return Status::InvalidArgument("source " + std::to_string(source) + " is not a node");
  }
  if (options.chunk_bytes == 0) return Status::InvalidArgument("chunk size must be positive");
  if (options.streams < 1) return Status::InvalidArgument("streams must be at least 1");
  std::vector<bool> in(n, options.members.empty());
  for (int node : options.members) {
    if (node < 0 || node >= n) {
      return Status::InvalidArgument("member " + std::to_string(node) + " is not a node");
    }
    in[node] = true;
  }
  Ranks ranks;
  ranks.nodes.push_back(source);
  for (int node = 0; node < n; ++node) {
    if (in[node] && node != source) ranks.nodes.push_back(node);
  }
  return ranks;
}

Plan StartPlan(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes,
               const PlanOptions& options, std::string algorithm) {
  Plan plan;
  plan.algorithm = std::move(algorithm);
  plan.mode = PlanMode::kPush;
  plan.payload_bytes = payload_bytes;
  plan.chunk_bytes = options.chunk_bytes;
  for (int node : ranks.nodes) plan.members.push_back(net.nodes[node].name);
  return plan;
}

ChunkRange InterleavedChunks(uint64_t num_chunks, int lanes, int lane) {
  return ChunkRange{static_cast<uint64_t>(lane), std::max<uint64_t>(num_chunks, lane),
                    static_cast<uint64_t>(lanes)};
}

void AddEdge(Lane& lane, int parent, int child) {
  for (Fanout& fanout : lane.fanouts) {
    if (fanout.parent == parent) {
      fanout.children.push_back(child);
      return;
    }
  }
  lane.fanouts.push_back(Fanout{parent, {child}, {}});
}

}  // namespace gridcast
