#include "collectives/planners/sssmst.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>

#include "collectives/planners/planner_util.h"
#include "collectives/planners/tree_shapes.h"

namespace gridcast {
namespace {

// Dijkstra from switch `from` over the switch graph (the tree's links in both directions, each
// direction weighed by `hop_weight`): every switch's predecessor on its shortest path (-1 for
// `from`). O(V^2), as in [SMP] 2.
std::vector<int> ShortestPathPredecessors(
    const NetworkModel& net, int from, const std::function<double(const UplinkHop&)>& hop_weight) {
  const int n = static_cast<int>(net.switches.size());
  std::vector<double> dist(n, std::numeric_limits<double>::infinity());
  std::vector<int> pred(n, -1);
  std::vector<bool> done(n, false);
  dist[from] = 0;
  for (int round = 0; round < n; ++round) {
    int x = -1;
    for (int s = 0; s < n; ++s) {
      if (!done[s] && (x < 0 || dist[s] < dist[x])) x = s;
    }
    done[x] = true;
    auto relax = [&](int y, const UplinkHop& hop) {
      const double d = dist[x] + hop_weight(hop);
      if (!done[y] && d < dist[y]) {
        dist[y] = d;
        pred[y] = x;
      }
    };
    const Switch& sx = net.switches[x];
    if (sx.parent >= 0) relax(sx.parent, {x, true, sx.uplink_up_bps, sx.latency_s});
    for (int y = 0; y < n; ++y) {
      const Switch& sy = net.switches[y];
      if (sy.parent == x) relax(y, {y, false, sy.uplink_down_bps, sy.latency_s});
    }
  }
  return pred;
}

// The inter-switch tree over the working switches (G_w), indexed by working id; id 0 is the
// source's switch. Holds the state the down-to-up and up-to-down steps work on.
class InterSwitchTree {
 public:
  InterSwitchTree(const NetworkModel& net, std::vector<int> switches, std::vector<double> startup_s,
                  double chunk_bits, const SssMstPlanner::Options& options)
      : net_(net),
        switch_(std::move(switches)),
        startup_s_(std::move(startup_s)),
        chunk_bits_(chunk_bits),
        options_(options),
        parent_(switch_.size(), -1),
        children_(switch_.size()),
        edge_weight_(switch_.size(), 0),
        dist_(switch_.size(), 0),
        step_(switch_.size(), 0),
        load_(2, std::vector<int>(net.switches.size(), 0)) {}

  // Step 1: the shortest-path tree T_w and the channel load of its edges.
  void BuildShortestPathTree() {
    const std::vector<int> pred = ShortestPathPredecessors(
        net_, switch_[0], [this](const UplinkHop& hop) { return HopWeight(hop); });
    std::vector<int> id_of_switch(net_.switches.size(), -1);
    for (size_t w = 0; w < switch_.size(); ++w) id_of_switch[switch_[w]] = static_cast<int>(w);
    // Working ids follow the switch order, so children lists start in switch order.
    for (size_t w = 1; w < switch_.size(); ++w) {
      int s = pred[switch_[w]];
      while (id_of_switch[s] < 0) s = pred[s];
      const int parent = id_of_switch[s];
      parent_[w] = parent;
      children_[parent].push_back(static_cast<int>(w));
      // R_cluster weight; in a switch tree the shortest path is the only one, so this is also
      // the difference of the two Dijkstra distances.
      edge_weight_[w] = RouteWeight(parent, static_cast<int>(w));
      AddLoad(parent, static_cast<int>(w));
    }
  }

  // §2.3: w(p) bottom-up, then every sender's children by descending key; ties keep switch
  // order. The paper's loop orders the children of level l's nodes while it is at level l,
  // which never orders the root's children; the digest's reading (order the parents at l-1,
  // i.e. every sender once its children's values are known) is what this does.
  void OrderDownToUp() {
    const std::vector<int> order = BreadthFirst();
    std::vector<double> subtree(switch_.size(), 0);  // w(p); 0 for leaves
    std::vector<double> sigma(switch_.size(), 0);    // Σ_u reported to the parent
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int u = *it;
      if (u == 0) continue;
      sigma[u] = subtree[u] + edge_weight_[u] + (children_[u].empty() ? 0 : startup_s_[u]);
      subtree[parent_[u]] = std::max(subtree[parent_[u]], sigma[u]);
    }
    const std::vector<double>& key =
        options_.order_key == SssMstPlanner::OrderKey::kSubtreeWeight ? subtree : sigma;
    for (std::vector<int>& kids : children_) {
      std::stable_sort(kids.begin(), kids.end(), [&key](int a, int b) { return key[a] > key[b]; });
    }
    RecomputeSteps();
  }

  // §2.4: round 1 visits the tree breadth first, round 2 depth first, each with its own holding
  // set S_H (Fig. 2.3 starts from S_H = {}). Round 2 is our reading of the "second case": a
  // sender with several children left over by round 1 (too few candidates) or given new ones by
  // it (a candidate that took a child).
  void Parallel() {
    std::vector<int> held;
    std::deque<int> queue = {0};
    while (!queue.empty()) {
      const int v = queue.front();
      queue.pop_front();
      for (int c : Visit(v, held)) queue.push_back(c);
    }
    held.clear();
    std::function<void(int)> depth_first = [&](int v) {
      for (int c : Visit(v, held)) depth_first(c);
    };
    depth_first(0);
  }

  const std::vector<int>& children(int w) const { return children_[w]; }

 private:
  std::vector<int> BreadthFirst() const {
    std::vector<int> order = {0};
    for (size_t i = 0; i < order.size(); ++i) {
      for (int c : children_[order[i]]) order.push_back(c);
    }
    return order;
  }

  double HopWeight(const UplinkHop& hop) const {
    return chunk_bits_ / hop.rate_bps + hop.latency_s;
  }

  // The R_cluster weight from working switch a to b: the switch-tree route.
  double RouteWeight(int a, int b) const {
    double weight = 0;
    for (const UplinkHop& hop : SwitchRoute(net_, switch_[a], switch_[b])) weight += HopWeight(hop);
    return weight;
  }

  int& Load(const UplinkHop& hop) { return load_[hop.up ? 0 : 1][hop.switch_index]; }

  void AddLoad(int a, int b) {
    for (const UplinkHop& hop : SwitchRoute(net_, switch_[a], switch_[b])) ++Load(hop);
  }

  bool RouteHasChannel(int a, int b) {
    for (const UplinkHop& hop : SwitchRoute(net_, switch_[a], switch_[b])) {
      if (Load(hop) + 1 > options_.channels_per_link) return false;
    }
    return true;
  }

  // One-port: the k-th child (1-based) of a sender receives at the sender's step + k (the
  // digest's PROPOSAL for step numbers). Recomputing after every change does step 8's
  // bookkeeping (v's later children move down by k) by itself.
  void RecomputeSteps() {
    for (int v : BreadthFirst()) {
      for (size_t k = 0; k < children_[v].size(); ++k) {
        step_[children_[v][k]] = step_[v] + static_cast<int>(k) + 1;
      }
    }
  }

  // Fig. 2.3 step 1, then the paralleling procedure at v. Returns v's children as they were
  // when visited: the traversal goes on into children moved away from v too (their new parents
  // were visited before v, so they would be missed otherwise).
  std::vector<int> Visit(int v, std::vector<int>& held) {
    dist_[v] = v == 0 ? 0 : dist_[parent_[v]] + edge_weight_[v];
    // Sorted by distance to the source; among equals, the earlier visited first.
    auto at = std::upper_bound(held.begin(), held.end(), dist_[v],
                               [this](double d, int u) { return d < dist_[u]; });
    const int position = static_cast<int>(at - held.begin());
    held.insert(at, v);
    std::vector<int> visited_children = children_[v];
    ParallelAt(v, held, position);
    return visited_children;
  }

  // Fig. 2.3 steps 2-8 for sender v at `position` in the holding set.
  void ParallelAt(int v, const std::vector<int>& held, int position) {
    std::vector<int>& kids = children_[v];
    const size_t m = kids.size();
    if (m < 2) return;
    // Step 5's right side: v's delivery of the child it would serve j-th, j·startup(v) plus its
    // earlier links. Candidates are re-sorted in step 8, so a candidate may end up serving any
    // of the moved positions; it is tested against the earliest one (j = 2, v keeps its first
    // child), where v is fastest, so the test holds wherever it lands. The v->child link is
    // common to both sides and left out, as the digest says.
    const double v_delivers = 2 * startup_s_[v] + edge_weight_[kids[0]];
    std::vector<int> chosen;
    // Steps 2 and 7: a window of m-1 slid right to left from v over S_H checks every holder
    // nearer to the source once, until m-1 are found.
    for (int i = position - 1; i >= 0 && chosen.size() + 1 < m; --i) {
      const int u = held[i];
      // Step 3 as written: a holder that received before v is invalid. This also excludes v's
      // ancestors, which are busy with their own sends.
      if (step_[u] < step_[v]) continue;
      // Step 5: u's start-up plus the route u->v must beat v.
      if (!(startup_s_[u] + RouteWeight(u, v) < v_delivers)) continue;
      // Step 6: the route u->v needs a free channel on every link.
      if (!RouteHasChannel(u, v)) continue;
      AddLoad(u, v);
      chosen.push_back(u);
    }
    if (chosen.empty()) return;
    // Step 8: nearest first by the weight of s -> u -> v; ties keep S_H order (found order is
    // right to left, so reverse it first).
    std::reverse(chosen.begin(), chosen.end());
    std::stable_sort(chosen.begin(), chosen.end(), [this, v](int a, int b) {
      return dist_[a] + RouteWeight(a, v) < dist_[b] + RouteWeight(b, v);
    });
    const std::vector<int> moved(kids.begin() + 1, kids.begin() + 1 + chosen.size());
    kids.erase(kids.begin() + 1, kids.begin() + 1 + chosen.size());
    for (size_t i = 0; i < chosen.size(); ++i) {
      const int u = chosen[i];
      const int c = moved[i];
      parent_[c] = u;
      // The new edge is weighed as the path from u to c through v (step 8). In a switch tree
      // that is also the physical route in round 1, where u lies outside v's subtree.
      edge_weight_[c] += RouteWeight(u, v);
      // The paper gives the new link v's least step: it becomes u's first send.
      children_[u].insert(children_[u].begin(), c);
    }
    RecomputeSteps();
  }

  const NetworkModel& net_;
  const std::vector<int> switch_;       // working id -> switch index
  const std::vector<double> startup_s_;  // working id -> leader's send time per chunk
  const double chunk_bits_;
  const SssMstPlanner::Options options_;
  std::vector<int> parent_;
  std::vector<std::vector<int>> children_;  // send order
  std::vector<double> edge_weight_;         // weight of the edge parent -> id
  std::vector<double> dist_;                // path weight from the source, set when visited
  std::vector<int> step_;
  std::vector<std::vector<int>> load_;      // [up ? 0 : 1][switch]: paths on that link direction
};

}  // namespace

Result<Plan> SssMstPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                     const PlanOptions& options) const {
  if (options_.channels_per_link < 1) {
    return Status::InvalidArgument("sssmst: channels per link must be at least 1");
  }
  GRIDCAST_RETURN_IF_ERROR(CheckSwitchTree(net));
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  Lane& lane = plan.lanes.emplace_back();
  lane.streams = options.streams;
  lane.chunks.push_back(InterleavedChunks(plan.NumChunks(), 1, 0));

  // Members per switch: the leader first (rank 0 on its own switch, else the best upload; the
  // stable sort keeps rank order among equals), then the others by upload, so the binomial
  // tree's inner nodes are the faster senders.
  const int source_switch = net.nodes[ranks.nodes[0]].switch_index;
  std::vector<std::vector<int>> members_of(net.switches.size());
  for (int r = 0; r < ranks.size(); ++r) {
    members_of[net.nodes[ranks.nodes[r]].switch_index].push_back(r);
  }
  std::vector<int> working = {source_switch};
  for (int s = 0; s < static_cast<int>(net.switches.size()); ++s) {
    std::vector<int>& members = members_of[s];
    if (members.empty()) continue;
    if (s != source_switch) working.push_back(s);
    auto up_bps = [&](int r) { return net.nodes[ranks.nodes[r]].up_bps; };
    std::stable_sort(members.begin() + (s == source_switch ? 1 : 0), members.end(),
                     [&](int a, int b) { return up_bps(a) > up_bps(b); });
  }
  const double chunk_bits = static_cast<double>(options.chunk_bytes) * 8;
  std::vector<double> startup_s;
  for (int s : working) {
    startup_s.push_back(chunk_bits / net.nodes[ranks.nodes[members_of[s][0]]].up_bps);
  }

  InterSwitchTree tree(net, working, startup_s, chunk_bits, options_);
  tree.BuildShortestPathTree();
  tree.OrderDownToUp();
  tree.Parallel();

  // Inter-switch sends first, then the intra-switch binomial tree (the paper's level 2, then 1).
  for (size_t w = 0; w < working.size(); ++w) {
    for (int c : tree.children(static_cast<int>(w))) {
      AddEdge(lane, members_of[working[w]][0], members_of[working[c]][0]);
    }
  }
  for (int s : working) {
    const std::vector<int>& members = members_of[s];
    const Tree binomial = KnomialTree(static_cast<int>(members.size()), 2);
    for (size_t v = 0; v < binomial.size(); ++v) {
      for (int c : binomial[v]) AddEdge(lane, members[v], members[c]);
    }
  }
  return plan;
}

}  // namespace gridcast
