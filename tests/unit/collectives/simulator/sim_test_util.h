// Networks and hand-made plans shared by the simulator tests and bench_simulate_scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "collectives/planners/planner_util.h"

namespace gridcast {

// p identical nodes n0..n(p-1) on one switch.
inline NetworkModel OneSwitch(int p, double bps) {
  NetworkModel net;
  net.name = "one-switch";
  net.switches.push_back({"core", -1});
  for (int i = 0; i < p; ++i) net.nodes.push_back({"n" + std::to_string(i), 0, bps, bps});
  return net;
}

// Two sites under a core: `a` nodes under switch 1, `b` under switch 2 (uplink rates and
// latencies as given), every NIC `nic_bps`. Source n0 in site 1.
inline NetworkModel TwoSites(int a, int b, double nic_bps, double uplink_a_bps, double uplink_b_bps,
                             double latency_s) {
  NetworkModel net;
  net.name = "two-sites";
  net.switches = {{"core", -1},
                  {"site-a", 0, uplink_a_bps, uplink_a_bps, latency_s},
                  {"site-b", 0, uplink_b_bps, uplink_b_bps, latency_s}};
  for (int i = 0; i < a + b; ++i) {
    net.nodes.push_back({"n" + std::to_string(i), i < a ? 1 : 2, nic_bps, nic_bps});
  }
  return net;
}

// Links order[i] -> order[2i+1], order[2i+2]: a binary tree in heap order rooted at order[0].
inline void AddHeapEdges(Lane& lane, const std::vector<int>& order) {
  const size_t n = order.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t child = 2 * i + 1; child <= 2 * i + 2 && child < n; ++child) {
      AddEdge(lane, order[i], order[child]);
    }
  }
}

// A Plan over every node of `net` (member i = node i, source member 0) with no lanes yet.
inline Plan StartHandPlan(const NetworkModel& net, uint64_t payload_bytes, uint64_t chunk_bytes,
                          std::string algorithm) {
  Plan plan;
  plan.algorithm = std::move(algorithm);
  plan.payload_bytes = payload_bytes;
  plan.chunk_bytes = chunk_bytes;
  for (const Node& node : net.nodes) plan.members.push_back(node.name);
  return plan;
}

// One pipelined binary tree in heap order, rooted at the source.
inline Plan BinaryTreePlan(const NetworkModel& net, uint64_t payload_bytes, uint64_t chunk_bytes) {
  Plan plan = StartHandPlan(net, payload_bytes, chunk_bytes, "hand-binary");
  std::vector<int> order(plan.members.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  Lane lane;
  lane.chunks.push_back(InterleavedChunks(plan.NumChunks(), 1, 0));
  AddHeapEdges(lane, order);
  plan.lanes.push_back(std::move(lane));
  return plan;
}

// Chunks interleaved over two lanes; each lane is source -> a binary tree over the other
// members, and the two trees have disjoint interior nodes (the second lists the members in
// reverse). The bandwidth shape of multi-lane, without its leaf swap.
inline Plan TwoTreesPlan(const NetworkModel& net, uint64_t payload_bytes, uint64_t chunk_bytes) {
  Plan plan = StartHandPlan(net, payload_bytes, chunk_bytes, "hand-two-trees");
  const int p = static_cast<int>(plan.members.size());
  for (int l = 0; l < 2; ++l) {
    std::vector<int> order;
    for (int i = 1; i < p; ++i) order.push_back(l == 0 ? i : p - i);
    Lane lane;
    lane.chunks.push_back(InterleavedChunks(plan.NumChunks(), 2, l));
    if (!order.empty()) AddEdge(lane, 0, order[0]);
    AddHeapEdges(lane, order);
    plan.lanes.push_back(std::move(lane));
  }
  return plan;
}

// One lane per non-source member o carrying every (p-1)-th chunk: source -> o, then around
// the ring of the other members (scatter-allgather's shape: many lanes, long paths).
inline Plan ScatterRingPlan(const NetworkModel& net, uint64_t payload_bytes, uint64_t chunk_bytes) {
  Plan plan = StartHandPlan(net, payload_bytes, chunk_bytes, "hand-scatter-ring");
  const int p = static_cast<int>(plan.members.size());
  for (int owner = 1; owner < p; ++owner) {
    Lane lane;
    lane.chunks.push_back(InterleavedChunks(plan.NumChunks(), p - 1, owner - 1));
    AddEdge(lane, 0, owner);
    for (int k = 1, prev = owner; k < p - 1; ++k) {
      const int next = 1 + (owner - 1 + k) % (p - 1);
      AddEdge(lane, prev, next);
      prev = next;
    }
    plan.lanes.push_back(std::move(lane));
  }
  return plan;
}

}  // namespace gridcast
