#include "collectives/max_flow.h"

#include <algorithm>
#include <deque>

namespace gridcast {

MaxFlow::MaxFlow(int vertices) : out_(vertices), level_(vertices), next_(vertices) {}

int MaxFlow::AddArc(int from, int to, int64_t capacity) {
  const int id = static_cast<int>(arcs_.size() / 2);
  out_[from].push_back(static_cast<int>(arcs_.size()));
  arcs_.push_back({to, capacity, 0});
  out_[to].push_back(static_cast<int>(arcs_.size()));
  arcs_.push_back({from, 0, 0});
  return id;
}

bool MaxFlow::Levels(int source, int sink) {
  std::fill(level_.begin(), level_.end(), -1);
  level_[source] = 0;
  std::deque<int> queue = {source};
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (int a : out_[v]) {
      const Arc& arc = arcs_[a];
      if (arc.flow < arc.capacity && level_[arc.to] < 0) {
        level_[arc.to] = level_[v] + 1;
        queue.push_back(arc.to);
      }
    }
  }
  return level_[sink] >= 0;
}

int64_t MaxFlow::Push(int vertex, int sink, int64_t limit) {
  if (vertex == sink) return limit;
  for (size_t& i = next_[vertex]; i < out_[vertex].size(); ++i) {
    const int a = out_[vertex][i];
    Arc& arc = arcs_[a];
    if (arc.flow >= arc.capacity || level_[arc.to] != level_[vertex] + 1) continue;
    const int64_t pushed = Push(arc.to, sink, std::min(limit, arc.capacity - arc.flow));
    if (pushed > 0) {
      arc.flow += pushed;
      arcs_[a ^ 1].flow -= pushed;
      return pushed;
    }
  }
  return 0;
}

int64_t MaxFlow::Run(int source, int sink) {
  while (Levels(source, sink)) {
    std::fill(next_.begin(), next_.end(), 0);
    while (Push(source, sink, kInfinite) > 0) {
    }
  }
  int64_t total = 0;
  for (int a : out_[source]) total += arcs_[a].flow;
  return total;
}

std::vector<MaxFlow::Path> MaxFlow::Paths(int source, int sink) const {
  std::vector<int64_t> left(arcs_.size());
  for (size_t a = 0; a < arcs_.size(); a += 2) left[a] = arcs_[a].flow;
  std::vector<Path> paths;
  while (true) {
    // Follow arcs with flow left from the source; a vertex seen twice closes a cycle, whose
    // flow is dropped before walking on.
    std::vector<int> vertices = {source};
    std::vector<int> used;
    std::vector<int> position(out_.size(), -1);
    position[source] = 0;
    while (vertices.back() != sink) {
      const int v = vertices.back();
      auto with_flow = std::find_if(out_[v].begin(), out_[v].end(),
                                    [&](int a) { return a % 2 == 0 && left[a] > 0; });
      if (with_flow == out_[v].end()) break;
      const int to = arcs_[*with_flow].to;
      used.push_back(*with_flow);
      if (position[to] >= 0) {
        const auto cycle_begin = used.begin() + position[to];
        int64_t cycle = kInfinite;
        for (auto it = cycle_begin; it != used.end(); ++it) cycle = std::min(cycle, left[*it]);
        for (auto it = cycle_begin; it != used.end(); ++it) left[*it] -= cycle;
        for (size_t i = position[to] + 1; i < vertices.size(); ++i) position[vertices[i]] = -1;
        vertices.resize(position[to] + 1);
        used.erase(cycle_begin, used.end());
        continue;
      }
      position[to] = static_cast<int>(vertices.size());
      vertices.push_back(to);
    }
    if (vertices.back() != sink) break;
    int64_t amount = kInfinite;
    for (int a : used) amount = std::min(amount, left[a]);
    for (int a : used) left[a] -= amount;
    paths.push_back({std::move(vertices), amount});
  }
  return paths;
}

}  // namespace gridcast
