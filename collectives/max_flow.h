// MaxFlow: the maximum flow of a small directed network with integer capacities (Dinic's
// algorithm), and the paths it takes. Planners use it to route whole units of a resource
// (children a member can serve, lane crossings an uplink can carry) from where they are to
// where they are needed. Value type; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gridcast {

class MaxFlow {
 public:
  static constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

  explicit MaxFlow(int vertices);

  // Adds an arc; returns its id for FlowOn. REQUIRES: from, to < vertices; capacity >= 0.
  int AddArc(int from, int to, int64_t capacity);

  // Pushes as much as the network carries from `source` to `sink`, adding to the flow pushed
  // by earlier calls; returns the total. REQUIRES: source != sink.
  int64_t Run(int source, int sink);

  int64_t FlowOn(int arc) const { return arcs_[2 * arc].flow; }

  // The flow from `source` to `sink` split into paths, each as its vertices (source first)
  // and the amount it carries. Flow around cycles, if any, is left out. REQUIRES: Run(source,
  // sink) was the last change.
  struct Path {
    std::vector<int> vertices;
    int64_t amount = 0;
  };
  std::vector<Path> Paths(int source, int sink) const;

 private:
  struct Arc {
    int to = 0;
    int64_t capacity = 0;  // 0 on the reverse arc
    int64_t flow = 0;      // the reverse arc holds minus the forward flow
  };

  bool Levels(int source, int sink);
  int64_t Push(int vertex, int sink, int64_t limit);

  std::vector<Arc> arcs_;                // arc 2i forward, 2i + 1 its reverse
  std::vector<std::vector<int>> out_;    // arc indices leaving each vertex
  std::vector<int> level_;
  std::vector<size_t> next_;             // per vertex: the next arc to try in this phase
};

}  // namespace gridcast
