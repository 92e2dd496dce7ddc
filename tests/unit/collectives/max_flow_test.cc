// MaxFlow against the max-flow min-cut theorem on every small network of a seeded family (the
// cut found by trying every vertex subset), and its paths against its arc flows.
#include "collectives/max_flow.h"

#include <gtest/gtest.h>

#include <random>

namespace gridcast {
namespace {

struct ArcSpec {
  int from;
  int to;
  int64_t capacity;
};

// The smallest capacity of arcs leaving a vertex set that holds `source` and not `sink`.
int64_t MinCut(int vertices, const std::vector<ArcSpec>& arcs, int source, int sink) {
  int64_t best = MaxFlow::kInfinite;
  for (uint32_t set = 0; set < (1u << vertices); ++set) {
    if (!(set >> source & 1) || (set >> sink & 1)) continue;
    int64_t cut = 0;
    for (const ArcSpec& a : arcs) {
      if ((set >> a.from & 1) && !(set >> a.to & 1)) cut += a.capacity;
    }
    best = std::min(best, cut);
  }
  return best;
}

TEST(MaxFlow, TextbookNetwork) {
  // CLRS figure 26.1: the maximum flow is 23.
  MaxFlow flow(6);
  for (const ArcSpec& a : std::vector<ArcSpec>{{0, 1, 16}, {0, 2, 13}, {2, 1, 4}, {1, 3, 12}, {3, 2, 9},
                                               {2, 4, 14}, {4, 3, 7}, {3, 5, 20}, {4, 5, 4}}) {
    flow.AddArc(a.from, a.to, a.capacity);
  }
  EXPECT_EQ(flow.Run(0, 5), 23);
  // Running again finds nothing more.
  EXPECT_EQ(flow.Run(0, 5), 23);
}

TEST(MaxFlow, UnreachableSinkAndInfiniteArcs) {
  MaxFlow flow(4);
  flow.AddArc(0, 1, MaxFlow::kInfinite);
  flow.AddArc(1, 2, 7);
  EXPECT_EQ(flow.Run(0, 3), 0);
  EXPECT_TRUE(flow.Paths(0, 3).empty());
  MaxFlow chain(3);
  chain.AddArc(0, 1, MaxFlow::kInfinite);
  const int last = chain.AddArc(1, 2, 7);
  EXPECT_EQ(chain.Run(0, 2), 7);
  EXPECT_EQ(chain.FlowOn(last), 7);
}

TEST(MaxFlow, EqualsTheMinimumCutAndItsPathsCarryIt) {
  std::mt19937 random(35);
  for (int trial = 0; trial < 300; ++trial) {
    const int vertices = 2 + static_cast<int>(random() % 7);
    std::vector<ArcSpec> arcs;
    const int count = static_cast<int>(random() % 20);
    for (int i = 0; i < count; ++i) {
      arcs.push_back({static_cast<int>(random() % vertices), static_cast<int>(random() % vertices),
                      static_cast<int64_t>(random() % 10)});
    }
    MaxFlow flow(vertices);
    std::vector<int> ids;
    for (const ArcSpec& a : arcs) ids.push_back(flow.AddArc(a.from, a.to, a.capacity));
    const int sink = vertices - 1;
    const int64_t total = flow.Run(0, sink);
    ASSERT_EQ(total, MinCut(vertices, arcs, 0, sink)) << "trial " << trial;

    // Paths run from source to sink along arcs, and together carry the whole flow without
    // putting more on an arc than its capacity.
    std::vector<std::vector<int64_t>> carried(vertices, std::vector<int64_t>(vertices, 0));
    std::vector<std::vector<int64_t>> capacity(vertices, std::vector<int64_t>(vertices, 0));
    for (const ArcSpec& a : arcs) capacity[a.from][a.to] += a.capacity;
    int64_t paths_total = 0;
    for (const MaxFlow::Path& path : flow.Paths(0, sink)) {
      ASSERT_GT(path.amount, 0);
      ASSERT_EQ(path.vertices.front(), 0);
      ASSERT_EQ(path.vertices.back(), sink);
      for (size_t i = 1; i < path.vertices.size(); ++i) {
        carried[path.vertices[i - 1]][path.vertices[i]] += path.amount;
      }
      paths_total += path.amount;
    }
    EXPECT_EQ(paths_total, total) << "trial " << trial;
    for (int u = 0; u < vertices; ++u) {
      for (int v = 0; v < vertices; ++v) EXPECT_LE(carried[u][v], capacity[u][v]) << u << "->" << v;
    }
    int64_t on_arcs = 0;
    for (size_t i = 0; i < arcs.size(); ++i) {
      EXPECT_GE(flow.FlowOn(ids[i]), 0);
      EXPECT_LE(flow.FlowOn(ids[i]), arcs[i].capacity);
      if (arcs[i].from == 0 && arcs[i].to != 0) on_arcs += flow.FlowOn(ids[i]);
      if (arcs[i].to == 0 && arcs[i].from != 0) on_arcs -= flow.FlowOn(ids[i]);
    }
    EXPECT_EQ(on_arcs, total);
  }
}

}  // namespace
}  // namespace gridcast
