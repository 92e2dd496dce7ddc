// Tree shapes that several planners share: heap-numbered trees, k-nomial trees and the
// hypercube dimension exchange. Each adds edges to a Tree (planner_util.h) over member
// indices [0, tree.size()); none allocates members or checks options. Pure functions.
#pragma once

#include <vector>

#include "collectives/planners/planner_util.h"

namespace gridcast {

// Chains `order`: order[0] -> order[1] -> ... (each edge appended to its parent's children).
void AddPath(const std::vector<int>& order, Tree& tree);

// A heap over `order`: order[i]'s children are order[f·i + 1] .. order[f·i + f] (those that
// exist), f = `fanout` >= 1, so the nodes listed first are the interior ones.
void AddHeap(const std::vector<int>& order, int fanout, Tree& tree);

// The k-nomial tree over ranks [0, p) rooted at 0 (radix k >= 2; k = 2 is the binomial tree).
// Gloo-style, least significant digit first: in round i every holder v < k^i sends to
// v + j·k^i, j = 1..k-1. A parent's children are listed in round order, and so the largest
// subtree comes first (v + k^i's subtree holds the ranks that agree with it in digits 0..i).
// A rank's parent is itself with its most significant non-zero base-k digit cleared.
Tree KnomialTree(int p, int radix);

// The parent of `rank` in KnomialTree (any p > rank), or -1 for rank 0.
int KnomialParent(int rank, int radix);

// Ranks from 0 down KnomialTree to `rank`: 0, ..., KnomialParent(rank), rank.
std::vector<int> KnomialPath(int rank, int radix);

// Spreads a message held by `origin` to every member by dimension exchange ([A2A] §3.2):
// with q the largest power of two <= p (p = holds.size()) and core = origin mod q,
//   1. an origin outside the q-cube first hands the message to core (its partner origin - q);
//   2. in stage s = 0, 1, ... every holder core ^ m (m < 2^s) sends to its neighbour across
//      dimension s;
//   3. every cube member c with an extra partner c + q < p sends to it.
// Members already marked in `holds` receive nothing (they still forward in step 2 and 3), which
// lets a caller seed the exchange with members that got the message some other way.
// REQUIRES: holds[origin]. On return every entry of `holds` is true.
void AddDimensionExchange(int origin, std::vector<bool>& holds, Tree& tree);

}  // namespace gridcast
