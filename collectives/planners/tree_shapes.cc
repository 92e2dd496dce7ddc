#include "collectives/planners/tree_shapes.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace gridcast {

void AddPath(const std::vector<int>& order, Tree& tree) {
  for (size_t i = 1; i < order.size(); ++i) tree[order[i - 1]].push_back(order[i]);
}

void AddHeap(const std::vector<int>& order, int fanout, Tree& tree) {
  const int64_t n = static_cast<int64_t>(order.size());
  for (int64_t child = 1; child < n; ++child) {
    tree[order[(child - 1) / fanout]].push_back(order[child]);
  }
}

Tree KnomialTree(int p, int radix) {
  Tree tree(p);
  for (int v = 0; v < p; ++v) {
    // 64-bit so that radix^i and v + j·radix^i cannot overflow before they pass p.
    for (int64_t power = 1; power < p; power *= radix) {
      if (power <= v) continue;
      for (int64_t j = 1; j < radix && v + j * power < p; ++j) {
        tree[v].push_back(static_cast<int>(v + j * power));
      }
    }
  }
  return tree;
}

int KnomialParent(int rank, int radix) {
  if (rank == 0) return -1;
  int64_t power = 1;
  while (power * radix <= rank) power *= radix;
  return static_cast<int>(rank % power);
}

std::vector<int> KnomialPath(int rank, int radix) {
  std::vector<int> path;
  for (int v = rank; v >= 0; v = KnomialParent(v, radix)) path.push_back(v);
  std::reverse(path.begin(), path.end());
  return path;
}

void AddDimensionExchange(int origin, std::vector<bool>& holds, Tree& tree) {
  assert(holds[origin]);
  const int p = static_cast<int>(holds.size());
  int q = 1;
  while (2 * q <= p) q *= 2;
  auto send = [&](int from, int to) {
    if (holds[to]) return;
    tree[from].push_back(to);
    holds[to] = true;
  };
  const int core = origin % q;
  send(origin, core);
  for (int bit = 1; bit < q; bit *= 2) {
    for (int m = 0; m < bit; ++m) send(core ^ m, core ^ m ^ bit);
  }
  for (int c = 0; c + q < p; ++c) send(c, c + q);
}

}  // namespace gridcast
