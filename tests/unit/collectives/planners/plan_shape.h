// Test helpers for the shape tests of the planners: a flat network whose node i is rank i, and
// views of a lane as parent -> children and depths.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "collectives/registry.h"
#include "collectives/validate_plan.h"

namespace gridcast {

// p nodes "n0".."n{p-1}" under one switch, node 0 the source: rank r is node r.
inline NetworkModel FlatNetwork(int p) {
  NetworkModel net;
  net.name = "flat";
  net.switches.push_back({"core", -1});
  for (int i = 0; i < p; ++i) net.nodes.push_back({"n" + std::to_string(i), 0, 100e6, 100e6});
  return net;
}

// The plan of `planner` for p members and `num_chunks` one-byte chunks; validated.
inline Plan ShapePlan(const std::string& planner, int p, int num_chunks) {
  Result<std::unique_ptr<Planner>> made = MakePlanner(planner);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return Plan{};
  PlanOptions options;
  options.chunk_bytes = 1;
  NetworkModel net = FlatNetwork(p);
  Result<Plan> plan = (*made)->MakePlan(net, static_cast<uint64_t>(num_chunks), options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return Plan{};
  Status valid = ValidatePlanOn(*plan, net);
  EXPECT_TRUE(valid.ok()) << planner << " p=" << p << ": " << valid.ToString();
  return *std::move(plan);
}

using Edges = std::map<int, std::vector<int>>;  // parent -> children in send order

inline Edges EdgesOf(const Lane& lane) {
  Edges edges;
  for (const Fanout& f : lane.fanouts) {
    if (!f.children.empty()) edges[f.parent] = f.children;
  }
  return edges;
}

// Hops from the lane's source to each member (-1 if unreached).
inline std::vector<int> Depths(const Lane& lane, int p) {
  std::vector<int> depth(p, -1);
  depth[lane.source] = 0;
  const Edges edges = EdgesOf(lane);
  std::vector<int> frontier = {lane.source};
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int v : frontier) {
      auto it = edges.find(v);
      if (it == edges.end()) continue;
      for (int c : it->second) {
        depth[c] = depth[v] + 1;
        next.push_back(c);
      }
    }
    frontier = std::move(next);
  }
  return depth;
}

inline int MaxOf(const std::vector<int>& values) {
  int best = 0;
  for (int v : values) best = std::max(best, v);
  return best;
}

inline int CeilLog(int p, int base) {
  int levels = 0;
  for (long long power = 1; power < p; power *= base) ++levels;
  return levels;
}

}  // namespace gridcast
