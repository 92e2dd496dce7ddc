#include "collectives/planners/multilane.h"

#include <numeric>

#include "collectives/planners/planner_util.h"

namespace gridcast {
namespace {

// Heap-numbered tree positions (1-based) of one site.
class SiteTrees {
 public:
  explicit SiteTrees(std::span<const int> nodes)
      : nodes_(nodes),
        size_a_((static_cast<int>(nodes.size()) + 1) / 2),
        size_b_(static_cast<int>(nodes.size()) / 2),
        sends_(nodes.size(), 0) {}

  int Size(int lane) const { return lane == kLaneA ? size_a_ : size_b_; }
  // Member index of X_i, X = A for kLaneA. REQUIRES: 1 <= i <= Size(lane).
  int Member(int lane, int i) const { return nodes_[Slot(lane, i)]; }

  // Adds X_from -> Y_to in `lane` (the lane X_from forwards) and counts the upload slot.
  void Send(Lane& lane, int from_tree, int from, int to_tree, int to) {
    AddEdge(lane, Member(from_tree, from), Member(to_tree, to));
    ++sends_[Slot(from_tree, from)];
  }

  std::vector<FreeUplink> FreeUplinks() const {
    std::vector<FreeUplink> free;
    for (int tree : {kLaneA, kLaneB}) {
      for (int i = 1; i <= Size(tree); ++i) {
        for (int k = sends_[Slot(tree, i)]; k < 2; ++k) free.push_back({Member(tree, i), tree});
      }
    }
    return free;
  }

 private:
  int Slot(int lane, int i) const { return lane == kLaneA ? i - 1 : size_a_ + i - 1; }

  std::span<const int> nodes_;
  int size_a_;
  int size_b_;
  std::vector<int> sends_;  // upload slots used, by slot
};

void AddFeed(Lane& lane, int feeder, int child, int streams) {
  if (streams > 0) {
    AddEdge(lane, feeder, child, streams);
  } else {
    AddEdge(lane, feeder, child);
  }
}

}  // namespace

std::vector<FreeUplink> AddMultiLaneSite(std::span<const int> nodes, int feed_a, int feed_b,
                                         int feed_streams, Lane& lane_a, Lane& lane_b) {
  SiteTrees trees(nodes);
  Lane* lanes[2] = {&lane_a, &lane_b};
  const int other[2] = {kLaneB, kLaneA};
  // A lone node gets both halves straight from the feeders (p = 2: all of M to the one peer).
  AddFeed(lane_a, feed_a, trees.Member(kLaneA, 1), feed_streams);
  AddFeed(lane_b, feed_b, trees.Member(trees.Size(kLaneB) > 0 ? kLaneB : kLaneA, 1), feed_streams);

  for (int x : {kLaneA, kLaneB}) {
    const int size = trees.Size(x);
    const int size_other = trees.Size(other[x]);
    // Internal nodes forward their lane to both children (send order: left child first).
    for (int i = 1; 2 * i <= size; ++i) {
      for (int child : {2 * i, 2 * i + 1}) {
        if (child <= size) trees.Send(*lanes[x], x, i, x, child);
      }
    }
    // The swap: leaf j of X covers Y_{2j+1}, Y_{2j+2} of the other tree.
    for (int leaf = size / 2 + 1; leaf <= size; ++leaf) {
      const int j = leaf - (size / 2 + 1);
      for (int target : {2 * j + 1, 2 * j + 2}) {
        if (target <= size_other) trees.Send(*lanes[x], x, leaf, other[x], target);
      }
    }
  }
  // B's leaves cover A_1..A_{2*ceil(N_B/2)}: with N_B even and N_A = N_B + 1 the last A node is
  // left out; B_{N_B/2} has one child in B and so a free slot for it.
  const int size_a = trees.Size(kLaneA);
  const int size_b = trees.Size(kLaneB);
  if (size_b >= 2 && size_b % 2 == 0 && size_a == size_b + 1) {
    trees.Send(lane_b, kLaneB, size_b / 2, kLaneA, size_a);
  }
  return trees.FreeUplinks();
}

Plan StartTwoLanePlan(const NetworkModel& net, const Ranks& ranks, uint64_t payload_bytes,
                      const PlanOptions& options, std::string algorithm) {
  Plan plan = StartPlan(net, ranks, payload_bytes, options, std::move(algorithm));
  for (int lane = 0; lane < 2; ++lane) {
    Lane& l = plan.lanes.emplace_back();
    l.streams = options.streams;
    l.chunks.push_back(InterleavedChunks(plan.NumChunks(), 2, lane));
  }
  return plan;
}

Result<Plan> MultiLanePlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                        const PlanOptions& options) const {
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartTwoLanePlan(net, ranks, payload_bytes, options, name());
  if (ranks.size() > 1) {
    std::vector<int> others(ranks.size() - 1);
    std::iota(others.begin(), others.end(), 1);
    AddMultiLaneSite(others, 0, 0, 0, plan.lanes[kLaneA], plan.lanes[kLaneB]);
  }
  return plan;
}

}  // namespace gridcast
