#include "collectives/plan_patch.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "collectives/planners/planner_util.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

// One lane's tree as parent pointers and ordered children, with each edge's streams.
struct LaneTree {
  std::vector<int> parent;                 // -1: the lane's source, or not in its tree
  std::vector<std::vector<int>> children;  // per member, in send order
  std::vector<std::vector<int>> streams;   // per member, one per child: the edge's stream count
};

LaneTree TreeOf(const Lane& lane, size_t members) {
  LaneTree tree{std::vector<int>(members, -1), std::vector<std::vector<int>>(members),
                std::vector<std::vector<int>>(members)};
  for (const Fanout& fanout : lane.fanouts) {
    for (size_t i = 0; i < fanout.children.size(); ++i) {
      const int child = fanout.children[i];
      tree.parent[child] = fanout.parent;
      tree.children[fanout.parent].push_back(child);
      tree.streams[fanout.parent].push_back(lane.StreamsOn(fanout, i));
    }
  }
  return tree;
}

// Whether `member` is `root` or below it. Parent pointers may hold a cycle while a patch is
// checked: the walk stops after visiting every member once.
bool InSubtree(const LaneTree& tree, int root, int member) {
  for (size_t steps = 0; member >= 0 && steps <= tree.parent.size(); ++steps) {
    if (member == root) return true;
    member = tree.parent[member];
  }
  return false;
}

int SubtreeSize(const LaneTree& tree, int root) {
  int size = 0;
  std::vector<int> stack = {root};
  while (!stack.empty() && size <= static_cast<int>(tree.parent.size())) {
    const int m = stack.back();
    stack.pop_back();
    ++size;
    stack.insert(stack.end(), tree.children[m].begin(), tree.children[m].end());
  }
  return size;
}

// Moves `child` from its parent to `new_parent` in `tree`, with `streams` on the new edge.
void MoveInTree(LaneTree& tree, int child, int new_parent, int streams) {
  const int old_parent = tree.parent[child];
  std::vector<int>& siblings = tree.children[old_parent];
  const auto at = std::find(siblings.begin(), siblings.end(), child);
  tree.streams[old_parent].erase(tree.streams[old_parent].begin() + (at - siblings.begin()));
  siblings.erase(at);
  tree.parent[child] = new_parent;
  tree.children[new_parent].push_back(child);
  tree.streams[new_parent].push_back(streams);
}

std::set<int> MembersOf(const std::vector<Failure>& failures) {
  std::set<int> members;
  for (const Failure& f : failures) members.insert(f.member);
  return members;
}

Status CheckMembers(const std::vector<Failure>& failures, size_t members) {
  for (const Failure& f : failures) {
    if (f.member < 0 || static_cast<size_t>(f.member) >= members) {
      return Status::InvalidArgument("a failure names member " + std::to_string(f.member) + " of " +
                                     std::to_string(members));
    }
  }
  return Status::Ok();
}

// The upload the plan puts on each NIC and each switch uplink (by switch and direction), in
// bits per second, at its lanes' rates, over the edges Add is given.
class Loads {
 public:
  Loads(const NetworkModel& net, const std::vector<int>& member_nodes, const std::vector<double>& lane_bps)
      : net_(net), member_nodes_(member_nodes), lane_bps_(lane_bps), nic_(member_nodes.size(), 0) {}

  void Add(int lane, int parent, int child, double sign) {
    const double bps = sign * lane_bps_[lane];
    nic_[parent] += bps;
    for (const UplinkHop& hop : Route(parent, child)) uplinks_[{hop.switch_index, hop.up}] += bps;
  }
  // What `parent` has to spare, after taking lane `lane`'s rate, on its NIC and on the way to
  // `child`.
  double SpareAfter(int lane, int parent, int child) const {
    const double bps = lane_bps_[lane];
    double spare = net_.nodes[member_nodes_[parent]].up_bps - nic_[parent] - bps;
    for (const UplinkHop& hop : Route(parent, child)) {
      const auto load = uplinks_.find({hop.switch_index, hop.up});
      spare = std::min(spare, hop.rate_bps - (load == uplinks_.end() ? 0 : load->second) - bps);
    }
    return spare;
  }

 private:
  std::vector<UplinkHop> Route(int parent, int child) const {
    return SwitchRoute(net_, net_.nodes[member_nodes_[parent]].switch_index,
                       net_.nodes[member_nodes_[child]].switch_index);
  }

  const NetworkModel& net_;
  const std::vector<int>& member_nodes_;
  const std::vector<double>& lane_bps_;
  std::vector<double> nic_;
  std::map<std::pair<int, bool>, double> uplinks_;
};

Status CheckRepairable(const Plan& plan, const RepairInputs& in) {
  const size_t members = plan.members.size();
  if (!plan.HasLanes() || plan.shared_chunks) {
    return Status::FailedPrecondition("only push plans of fixed lanes are patched (" + plan.algorithm + ")");
  }
  if (in.net == nullptr || in.member_nodes.size() != members) {
    return Status::InvalidArgument("a repair needs the network and every member's node");
  }
  for (const int node : in.member_nodes) {
    if (node < 0 || static_cast<size_t>(node) >= in.net->nodes.size()) {
      return Status::InvalidArgument("a member's node " + std::to_string(node) + " is not in the network");
    }
  }
  if (!(in.predicted_s > 0)) return Status::InvalidArgument("a repair needs the plan's predicted time");
  if (!in.lane_held.empty()) {
    if (in.lane_held.size() != members) return Status::InvalidArgument("lane_held must have one row per member");
    for (const std::vector<uint64_t>& row : in.lane_held) {
      if (row.size() != plan.lanes.size()) return Status::InvalidArgument("lane_held must have one entry per lane");
    }
  }
  GRIDCAST_RETURN_IF_ERROR(CheckMembers(in.failures, members));
  for (const Lane& lane : plan.lanes) {
    for (const Failure& f : in.failures) {
      if (lane.source == f.member) {
        return Status::FailedPrecondition("member " + plan.members[f.member] +
                                          " is a lane's source: nothing can feed that lane in its place");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

const char* RepairReasonName(RepairReason reason) {
  switch (reason) {
    case RepairReason::kGone:
      return "gone";
    case RepairReason::kSilent:
      return "silent";
    case RepairReason::kSlow:
      return "slow";
  }
  return "unknown";
}

Result<PlanPatch> PatchPlan(const Plan& plan, const RepairInputs& in) {
  GRIDCAST_RETURN_IF_ERROR(ValidatePlan(plan));
  GRIDCAST_RETURN_IF_ERROR(CheckRepairable(plan, in));
  const size_t members = plan.members.size();
  const std::set<int> leaving = MembersOf(in.failures);
  // A gone or silent member takes nothing from its parent's upload; a slow one still receives.
  std::set<int> receive_nothing;
  for (const Failure& f : in.failures) {
    if (f.reason != RepairReason::kSlow) receive_nothing.insert(f.member);
  }
  std::vector<LaneTree> trees;
  std::vector<double> lane_bps;
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    trees.push_back(TreeOf(plan.lanes[l], members));
    lane_bps.push_back(static_cast<double>(plan.LaneBytes(static_cast<int>(l))) * 8 / in.predicted_s);
  }
  Loads loads(*in.net, in.member_nodes, lane_bps);
  struct Orphan {
    int lane, child, parent;
  };
  std::vector<Orphan> orphans;
  for (size_t l = 0; l < trees.size(); ++l) {
    for (int parent = 0; parent < static_cast<int>(members); ++parent) {
      for (const int child : trees[l].children[parent]) {
        if (leaving.count(parent) != 0) {
          orphans.push_back({static_cast<int>(l), child, parent});
        } else if (receive_nothing.count(child) == 0) {
          loads.Add(static_cast<int>(l), parent, child, +1);
        }
      }
    }
  }
  // Live orphans first, largest subtree first; the gone or silent ones (they receive nothing
  // more) last.
  std::vector<std::tuple<bool, int, int, int>> order;  // receives nothing, -subtree, lane, child
  for (const Orphan& o : orphans) {
    order.emplace_back(receive_nothing.count(o.child) != 0, -SubtreeSize(trees[o.lane], o.child), o.lane, o.child);
  }
  std::vector<size_t> by_order(orphans.size());
  for (size_t i = 0; i < by_order.size(); ++i) by_order[i] = i;
  std::sort(by_order.begin(), by_order.end(), [&](size_t a, size_t b) { return order[a] < order[b]; });

  const auto held = [&](int member, int lane) { return in.lane_held.empty() ? 0 : in.lane_held[member][lane]; };
  // The live member to feed `child` in lane `l`, best first: one that can take the lane
  // without overloading anything, then ahead or level in the lane, then most to spare, the
  // child's switch, fewest children in the lane, lowest index; -1 if none. Room comes before
  // being ahead: a parent behind the child catches up at its own parent's rate, while one
  // without room slows every child it feeds to the end (flat16 at 50mbit, splitstream:2,
  // core-1 failed 6.44 s in and patched 0.04 s later: both its children under the source,
  // which sets the bound, and 1.43 of it predicted; patched 0.1 s later, when another member
  // was level, 1.06).
  const auto best_parent = [&](int l, int child, bool dead) {
    const LaneTree& tree = trees[l];
    const int child_switch = in.net->nodes[in.member_nodes[child]].switch_index;
    std::optional<std::tuple<bool, bool, double, bool, size_t, int>> best;
    for (int p = 0; p < static_cast<int>(members); ++p) {
      if (p == child || leaving.count(p) != 0 || InSubtree(tree, child, p)) continue;
      if (p != plan.lanes[l].source && tree.parent[p] < 0) continue;  // not in this lane's tree
      const double spare = dead ? 0 : loads.SpareAfter(l, p, child);
      const auto key = std::make_tuple(spare < 0, held(p, l) < held(child, l), -spare,
                                       in.net->nodes[in.member_nodes[p]].switch_index != child_switch,
                                       tree.children[p].size(), p);
      if (!best || key < *best) best = key;
    }
    return best ? std::get<5>(*best) : -1;
  };
  PlanPatch patch;
  patch.version = in.version;
  patch.failures = in.failures;
  // Moves `child` from `old_parent` to `new_parent` in lane `l`, keeping the edge's streams;
  // the new edge loads the new parent unless the child receives nothing more.
  const auto move = [&](int l, int child, int old_parent, int new_parent, bool loads_parent) {
    LaneTree& tree = trees[l];
    const std::vector<int>& siblings = tree.children[old_parent];
    const int streams = tree.streams[old_parent][std::find(siblings.begin(), siblings.end(), child) - siblings.begin()];
    MoveInTree(tree, child, new_parent, streams);
    if (loads_parent) loads.Add(l, new_parent, child, +1);
    patch.moves.push_back({l, child, old_parent, new_parent, streams});
  };
  for (const size_t i : by_order) {
    const Orphan& orphan = orphans[i];
    const bool dead = receive_nothing.count(orphan.child) != 0;
    const int chosen = best_parent(orphan.lane, orphan.child, dead);
    if (chosen < 0) {
      return Status::FailedPrecondition("no live member can feed " + plan.members[orphan.child] + " in lane " +
                                        std::to_string(orphan.lane));
    }
    move(orphan.lane, orphan.child, orphan.parent, chosen, !dead);
  }
  // A slow member keeps receiving, and its parents' upload with it: where another member has
  // more to spare than its parent in a lane, it moves there (flat16-50, splitstream:2: a
  // straggler that is the source's child held a tenth of the source's upload, which sets the
  // bound, while a member that is a leaf in every lane had all of its own to spare).
  for (const Failure& f : in.failures) {
    if (f.reason != RepairReason::kSlow) continue;
    for (int l = 0; l < static_cast<int>(trees.size()); ++l) {
      const int parent = trees[l].parent[f.member];
      if (parent < 0) continue;
      loads.Add(l, parent, f.member, -1);  // weighed against the others on equal terms
      const int chosen = best_parent(l, f.member, /*dead=*/false);
      if (chosen >= 0 && chosen != parent &&
          loads.SpareAfter(l, chosen, f.member) > loads.SpareAfter(l, parent, f.member)) {
        move(l, f.member, parent, chosen, /*loads_parent=*/true);
      } else {
        loads.Add(l, parent, f.member, +1);
      }
    }
  }
  return patch;
}

Status ValidatePatch(const Plan& plan, const PlanPatch& patch, const std::vector<Failure>& earlier) {
  const size_t members = plan.members.size();
  if (patch.version != plan.patch_version + 1) {
    return Status::InvalidArgument("patch " + std::to_string(patch.version) + " does not follow the plan's patch " +
                                   std::to_string(plan.patch_version));
  }
  GRIDCAST_RETURN_IF_ERROR(CheckMembers(patch.failures, members));
  GRIDCAST_RETURN_IF_ERROR(CheckMembers(earlier, members));
  std::set<int> leaving = MembersOf(patch.failures);
  leaving.merge(MembersOf(earlier));
  std::vector<LaneTree> trees;
  for (const Lane& lane : plan.lanes) trees.push_back(TreeOf(lane, members));
  for (size_t i = 0; i < patch.moves.size(); ++i) {
    const EdgeMove& move = patch.moves[i];
    const std::string where = "move " + std::to_string(i);
    if (move.lane < 0 || static_cast<size_t>(move.lane) >= trees.size()) {
      return Status::InvalidArgument(where + " names lane " + std::to_string(move.lane));
    }
    for (const int m : {move.child, move.old_parent, move.new_parent}) {
      if (m < 0 || static_cast<size_t>(m) >= members) {
        return Status::InvalidArgument(where + " names member " + std::to_string(m));
      }
    }
    if (move.streams < 0) return Status::InvalidArgument(where + " has a negative stream count");
    LaneTree& tree = trees[move.lane];
    if (tree.parent[move.child] != move.old_parent) {
      return Status::InvalidArgument(where + ": " + plan.members[move.child] + "'s parent in lane " +
                                     std::to_string(move.lane) + " is not " + plan.members[move.old_parent]);
    }
    if (move.new_parent == move.child || leaving.count(move.new_parent) != 0) {
      return Status::InvalidArgument(where + " gives " + plan.members[move.child] + " the parent " +
                                     plan.members[move.new_parent] + ", itself or a failed or slow member");
    }
    MoveInTree(tree, move.child, move.new_parent, move.streams);
  }
  for (size_t l = 0; l < trees.size(); ++l) {
    for (const int m : leaving) {
      if (!trees[l].children[m].empty()) {
        return Status::InvalidArgument(plan.members[m] + " still has children in lane " + std::to_string(l));
      }
    }
  }
  return Status::Ok();
}

Result<Plan> ApplyPatch(Plan plan, const PlanPatch& patch, const std::vector<Failure>& earlier) {
  GRIDCAST_RETURN_IF_ERROR(ValidatePatch(plan, patch, earlier));
  for (const EdgeMove& move : patch.moves) {
    Lane& lane = plan.lanes[move.lane];
    for (Fanout& fanout : lane.fanouts) {
      if (fanout.parent != move.old_parent) continue;
      const auto at = std::find(fanout.children.begin(), fanout.children.end(), move.child);
      if (!fanout.streams.empty()) fanout.streams.erase(fanout.streams.begin() + (at - fanout.children.begin()));
      fanout.children.erase(at);
    }
    std::erase_if(lane.fanouts, [](const Fanout& f) { return f.children.empty(); });
    auto target = std::find_if(lane.fanouts.begin(), lane.fanouts.end(),
                               [&](const Fanout& f) { return f.parent == move.new_parent; });
    if (target == lane.fanouts.end()) {
      lane.fanouts.push_back(Fanout{move.new_parent, {}, {}});
      target = lane.fanouts.end() - 1;
    }
    const int streams = move.streams > 0 ? move.streams : lane.streams;
    if (target->streams.empty() && streams != lane.streams) target->streams.assign(target->children.size(), lane.streams);
    target->children.push_back(move.child);
    if (!target->streams.empty()) target->streams.push_back(streams);
  }
  plan.patch_version = patch.version;
  GRIDCAST_RETURN_IF_ERROR(ValidatePlan(plan).WithContext("the patched plan"));
  return plan;
}

}  // namespace gridcast
