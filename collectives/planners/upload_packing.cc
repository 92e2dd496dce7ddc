#include "collectives/planners/upload_packing.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <tuple>

#include "collectives/max_flow.h"
#include "collectives/planners/planner_util.h"
#include "collectives/planners/sites.h"
#include "collectives/validate_plan.h"
#include "common/units.h"

namespace gridcast {
namespace {

// The lanes a member's slots are spread over (the header, step 4; upload-asym-48-half on the
// netgrid: 1.18-1.21 of the bound with 1, 1.13-1.16 with 3, 1.12-1.14 with 6; with 3 the lanes
// of upload-three-sites-96 are deep enough for auto's flow-level prediction to step them chunk
// by chunk, 9 s instead of 0.1 s).
constexpr int kLanesPerMember = 2;
// The plan's window (Plan::window_chunks): what a lane sends in this long, within these bounds
// (on upload-three-sites-96's netgrid, lanes sharing chunks: 1.15-1.16 of the bound with
// windows of 2 and 4 chunks, 1.185 with the daemon's 8; 1.126-1.132 with 1, against 1.144-1.153
// with 2 in the same batch).
constexpr double kWindowSeconds = 0.25;
constexpr int kMaxWindowChunks = 64;

struct MemberLinks {
  double up_bps = kUnshaped;
  double down_bps = kUnshaped;
  int site = 0;
};

struct Network {
  const NetworkModel& net;
  std::vector<MemberLinks> members;  // by rank; rank 0 is the source
  std::vector<Site> sites;      // OrderSites; the source's site first

  int Receivers(int site) const {
    return static_cast<int>(sites[site].members.size()) - (site == members[0].site ? 1 : 0);
  }
};

// How the children of every lane are served at one rate: the result of step 2.
struct Routing {
  std::vector<int64_t> slots;  // per rank: children it can serve over all lanes
  // served[a][b]: children in site b served by members of site a, summed over the lanes,
  // besides the entries each site takes from its feeder (one per lane).
  std::vector<std::vector<int64_t>> served;
  std::vector<int> feeder;  // per site: where its entries come from; -1 for the source's
};

// Whole units of `rate` that `capacity` carries; MaxFlow::kInfinite when unshaped.
int64_t Units(double capacity, double rate) {
  if (capacity >= kFastestBps) return MaxFlow::kInfinite;
  return static_cast<int64_t>(std::floor(capacity / rate * (1 + kRoundingSlack)));
}

// Rewrites `served` so that no site both serves another and is served by one: the flow may
// carry children a -> b and b -> c where a -> c and b serving its own do the same with the same
// slots (and over a subset of the uplinks, in a tree). A site that imports then gives its
// slots to its own members and to its entries out only, which BuildLane relies on: the members
// a site places itself never wait for a site it imports from (see AssignSlots).
void CancelTransit(std::vector<std::vector<int64_t>>& served) {
  const int num_sites = static_cast<int>(served.size());
  auto largest = [&](int site, bool into) {
    int best = -1;
    for (int other = 0; other < num_sites; ++other) {
      if (other == site) continue;
      const int64_t amount = into ? served[other][site] : served[site][other];
      if (amount > 0 && (best < 0 || amount > (into ? served[best][site] : served[site][best]))) best = other;
    }
    return best;
  };
  for (int via = 0; via < num_sites; ++via) {
    for (;;) {
      const int from = largest(via, /*into=*/true);
      const int to = largest(via, /*into=*/false);
      if (from < 0 || to < 0) break;
      const int64_t amount = std::min(served[from][via], served[via][to]);
      served[from][via] -= amount;
      served[via][to] -= amount;
      served[via][via] += amount;
      served[from][to] += amount;  // from == to: the cycle's slots serve their own site
    }
  }
}

// What step 2 routes with, in lane-rate units: per site the slots its members give and the
// children its members need; per switch its uplink's room each way.
struct Room {
  std::vector<int64_t> supply, demand;
  std::vector<int64_t> up, down;
};

// Step 2's entries at `lanes` lanes, taken out of `room`; false when a site has no feeder.
bool ChooseFeeders(const Network& network, int lanes, Room* room, Routing* routing) {
  std::vector<int64_t>& supply = room->supply;
  std::vector<int64_t>& demand = room->demand;
  std::vector<int64_t>& up_units = room->up;
  std::vector<int64_t>& down_units = room->down;
  const NetworkModel& net = network.net;
  const std::vector<Site>& sites = network.sites;
  const int num_sites = static_cast<int>(sites.size());
  // Entries: one per lane into every site but the source's, from an earlier site (so every
  // lane reaches every site) that has the slots and the uplinks for them: among those at most
  // one site deeper than the shallowest (sites chained one behind the other would make deep
  // lanes), the one over the fewest uplinks, then with the most left on them at this rate (a
  // site two racks can feed takes its entries from the less loaded).
  routing->feeder.assign(num_sites, -1);
  std::vector<int> site_depth(num_sites, 0);
  for (int s = 1; s < num_sites; ++s) {
    struct Candidate {
      int site;
      size_t hops;
      int64_t left;
    };
    std::vector<Candidate> candidates;
    int shallowest = num_sites;
    for (int f = 0; f < s; ++f) {
      if (supply[f] < lanes) continue;
      const std::vector<UplinkHop> route = SwitchRoute(net, sites[f].switch_index, sites[s].switch_index);
      int64_t left = MaxFlow::kInfinite;
      for (const UplinkHop& hop : route) {
        left = std::min(left, hop.up ? up_units[hop.switch_index] : down_units[hop.switch_index]);
      }
      if (left < lanes) continue;
      candidates.push_back({f, route.size(), left});
      shallowest = std::min(shallowest, site_depth[f]);
    }
    const Candidate* best = nullptr;
    for (const Candidate& c : candidates) {
      if (site_depth[c.site] > shallowest + 1) continue;
      if (!best || c.hops < best->hops || (c.hops == best->hops && c.left > best->left)) best = &c;
    }
    if (!best) return false;
    routing->feeder[s] = best->site;
    site_depth[s] = site_depth[best->site] + 1;
    supply[routing->feeder[s]] -= lanes;
    demand[s] -= lanes;
    for (const UplinkHop& hop : SwitchRoute(net, sites[routing->feeder[s]].switch_index, sites[s].switch_index)) {
      int64_t& units = hop.up ? up_units[hop.switch_index] : down_units[hop.switch_index];
      if (units < MaxFlow::kInfinite) units -= lanes;
    }
  }
  return true;
}

// Step 2's rest: the children each site's slots cannot serve at home, by a max-flow over the
// switch tree; false when it cannot serve them all.
bool RouteTheRest(const Network& network, const Room& left, Routing* routing) {
  const std::vector<int64_t>& supply = left.supply;
  const std::vector<int64_t>& demand = left.demand;
  const NetworkModel& net = network.net;
  const std::vector<Site>& sites = network.sites;
  const int num_sites = static_cast<int>(sites.size());
  const int num_switches = static_cast<int>(net.switches.size());
  // The rest: supply of site s -> its switch, up and down the switch tree -> demand of site t.
  const int source = 0;
  const int sink = 1;
  auto supply_vertex = [&](int s) { return 2 + s; };
  auto demand_vertex = [&](int s) { return 2 + num_sites + s; };
  auto up_vertex = [&](int w) { return 2 + 2 * num_sites + w; };
  auto down_vertex = [&](int w) { return 2 + 2 * num_sites + num_switches + w; };
  MaxFlow flow(2 + 2 * num_sites + 2 * num_switches);
  int64_t total_demand = 0;
  for (int s = 0; s < num_sites; ++s) {
    const int w = sites[s].switch_index;
    flow.AddArc(source, supply_vertex(s), supply[s]);
    flow.AddArc(supply_vertex(s), demand_vertex(s), MaxFlow::kInfinite);
    flow.AddArc(demand_vertex(s), sink, demand[s]);
    flow.AddArc(supply_vertex(s), up_vertex(w), MaxFlow::kInfinite);
    flow.AddArc(down_vertex(w), demand_vertex(s), MaxFlow::kInfinite);
    total_demand += demand[s];
  }
  for (int w = 0; w < num_switches; ++w) {
    flow.AddArc(up_vertex(w), down_vertex(w), MaxFlow::kInfinite);
    if (w == 0) continue;
    flow.AddArc(up_vertex(w), up_vertex(net.switches[w].parent), left.up[w]);
    flow.AddArc(down_vertex(net.switches[w].parent), down_vertex(w), left.down[w]);
  }
  if (flow.Run(source, sink) < total_demand) return false;
  routing->served.assign(num_sites, std::vector<int64_t>(num_sites, 0));
  for (const MaxFlow::Path& path : flow.Paths(source, sink)) {
    const int from = path.vertices[1] - supply_vertex(0);
    const int to = path.vertices[path.vertices.size() - 2] - demand_vertex(0);
    routing->served[from][to] += path.amount;
  }
  return true;
}

// Step 2 at lane rate `lane_bps`: the routing that serves every receiver in each of `lanes`
// lanes, or none when the slots or the uplinks fall short.
std::optional<Routing> Route(const Network& network, double lane_bps, int lanes) {
  const NetworkModel& net = network.net;
  const std::vector<Site>& sites = network.sites;
  const int p = static_cast<int>(network.members.size());
  const int num_sites = static_cast<int>(sites.size());
  const int num_switches = static_cast<int>(net.switches.size());
  Routing routing;
  const int64_t most_children = int64_t{lanes} * (p - 1);
  for (int r = 0; r < p; ++r) {
    const MemberLinks& m = network.members[r];
    if (r > 0 && m.down_bps * (1 + kRoundingSlack) < lanes * lane_bps) return std::nullopt;
    routing.slots.push_back(std::min(most_children, Units(m.up_bps, lane_bps)));
  }
  // The source roots every lane.
  if (p > 1 && routing.slots[0] < lanes) return std::nullopt;

  Room left{std::vector<int64_t>(num_sites, 0), std::vector<int64_t>(num_sites, 0),
             std::vector<int64_t>(num_switches, MaxFlow::kInfinite), std::vector<int64_t>(num_switches, MaxFlow::kInfinite)};
  for (int s = 0; s < num_sites; ++s) {
    for (int r : sites[s].members) left.supply[s] += routing.slots[r];
    left.demand[s] = static_cast<int64_t>(lanes) * network.Receivers(s);
  }
  for (int w = 1; w < num_switches; ++w) {
    left.up[w] = Units(net.switches[w].uplink_up_bps, lane_bps);
    left.down[w] = Units(net.switches[w].uplink_down_bps, lane_bps);
  }
  if (!ChooseFeeders(network, lanes, &left, &routing)) return std::nullopt;
  if (!RouteTheRest(network, left, &routing)) return std::nullopt;
  CancelTransit(routing.served);
  return routing;
}

// One lane's share of a routing: what each site serves in it.
struct LaneBudget {
  std::vector<std::vector<int64_t>> serves;  // [from site][to site], entries included
  std::vector<int64_t> need;                 // per site: slots its members must give
};

// Splits routing.served over the lanes as evenly as possible (the remainders of the pairs
// into one site go to different lanes), with each site's entries from its feeder.
std::vector<LaneBudget> SplitOverLanes(const Network& network, const Routing& routing, int lanes) {
  const std::vector<Site>& sites = network.sites;
  const int num_sites = static_cast<int>(sites.size());
  std::vector<LaneBudget> budgets(lanes);
  for (LaneBudget& budget : budgets) {
    budget.serves.assign(num_sites, std::vector<int64_t>(num_sites, 0));
    budget.need.assign(num_sites, 0);
  }
  for (int to = 0; to < num_sites; ++to) {
    int next_lane = 0;
    for (int from = 0; from < num_sites; ++from) {
      if (from == to) continue;
      const int64_t total = routing.served[from][to];
      for (int l = 0; l < lanes; ++l) budgets[l].serves[from][to] = total / lanes;
      for (int64_t i = 0; i < total % lanes; ++i) {
        budgets[next_lane].serves[from][to] += 1;
        next_lane = (next_lane + 1) % lanes;
      }
    }
    for (LaneBudget& budget : budgets) {
      if (routing.feeder[to] >= 0) budget.serves[routing.feeder[to]][to] += 1;
      int64_t from_outside = 0;
      for (int from = 0; from < num_sites; ++from) from_outside += from == to ? 0 : budget.serves[from][to];
      budget.serves[to][to] = std::max<int64_t>(0, network.Receivers(to) - from_outside);
    }
  }
  for (LaneBudget& budget : budgets) {
    for (int from = 0; from < num_sites; ++from) {
      for (int to = 0; to < num_sites; ++to) budget.need[from] += budget.serves[from][to];
    }
  }
  return budgets;
}

// A site that imports places only some of its members itself: its entry and the children of
// its own slots (budget.serves[s][s]); the others wait for a parent from another site. So that
// none of its slots waits on a site that waits on them (its entries out), every member with
// slots in a lane must be among those it places itself: at most serves[s][s] + 1 holders per
// lane (serves[s][s] in the source's site, whose entry is the source). Where the parts made
// more, a holder of few slots in lane l hands them to another holder of l, which gives as many
// back in a lane m whose own limit allows it, or from slots it has left unused. CancelTransit
// made every site that exports no importer, so only importers can be over.
void LimitHolders(const Network& network, const Routing& routing, const std::vector<LaneBudget>& budgets,
                  int site, std::vector<std::vector<int64_t>>& lane_slots) {
  const int lanes = static_cast<int>(budgets.size());
  std::vector<int> givers;
  for (int r : network.sites[site].members) {
    if (r != 0) givers.push_back(r);
  }
  std::vector<int64_t> unused;
  for (int g : givers) {
    int64_t used = 0;
    for (int l = 0; l < lanes; ++l) used += lane_slots[l][g];
    unused.push_back(routing.slots[g] - used);
  }
  const bool source_site = site == network.members[0].site;
  auto limit = [&](int l) { return budgets[l].serves[site][site] + (source_site ? 0 : 1); };
  std::vector<int64_t> holders(lanes);  // per lane, the givers with slots in it
  for (int l = 0; l < lanes; ++l) {
    holders[l] = std::count_if(givers.begin(), givers.end(), [&](int g) { return lane_slots[l][g] > 0; });
  }
  for (int l = 0; l < lanes; ++l) {
    int64_t over = holders[l] - limit(l);
    while (over > 0) {
      // The holder of the fewest slots in l gives them up.
      size_t b = givers.size();
      for (size_t i = 0; i < givers.size(); ++i) {
        const int64_t amount = lane_slots[l][givers[i]];
        if (amount > 0 && (b == givers.size() || amount < lane_slots[l][givers[b]])) b = i;
      }
      if (b == givers.size()) break;  // no holder left (cannot be while over > 0)
      const int64_t amount = lane_slots[l][givers[b]];
      bool moved = false;
      for (size_t a = 0; a < givers.size() && !moved; ++a) {
        if (a == b || lane_slots[l][givers[a]] == 0) continue;
        if (unused[a] >= amount) {
          unused[a] -= amount;
          unused[b] += amount;
        } else {
          int m = 0;
          for (; m < lanes; ++m) {
            if (m == l || lane_slots[m][givers[a]] < amount) continue;
            const int64_t change = (lane_slots[m][givers[b]] == 0) - (lane_slots[m][givers[a]] == amount);
            if (holders[m] + change <= limit(m)) break;
          }
          if (m == lanes) continue;
          holders[m] += (lane_slots[m][givers[b]] == 0) - (lane_slots[m][givers[a]] == amount);
          lane_slots[m][givers[a]] -= amount;
          lane_slots[m][givers[b]] += amount;
        }
        lane_slots[l][givers[a]] += amount;
        lane_slots[l][givers[b]] = 0;
        holders[l] -= 1;
        moved = true;
      }
      if (!moved) break;
      --over;
    }
  }
}

// lane_slots[l][rank]: the children `rank` serves in lane l. The source spreads its slots over
// every lane (it roots them all); the other members of a site fill the lanes' needs in turn,
// most slots first, in kLanesPerMember parts each.
std::vector<std::vector<int64_t>> AssignSlots(const Network& network, const Routing& routing,
                                              const std::vector<LaneBudget>& budgets) {
  const int lanes = static_cast<int>(budgets.size());
  const int p = static_cast<int>(network.members.size());
  std::vector<std::vector<int64_t>> lane_slots(lanes, std::vector<int64_t>(p, 0));
  for (size_t s = 0; s < network.sites.size(); ++s) {
    std::vector<int64_t> need(lanes);
    for (int l = 0; l < lanes; ++l) need[l] = budgets[l].need[s];
    std::vector<int> givers;
    for (int r : network.sites[s].members) {
      if (r != 0) {
        givers.push_back(r);
        continue;
      }
      for (int l = 0; l < lanes; ++l) {
        lane_slots[l][0] = std::min(need[l], routing.slots[0] / lanes + (l < routing.slots[0] % lanes ? 1 : 0));
        need[l] -= lane_slots[l][0];
      }
    }
    std::stable_sort(givers.begin(), givers.end(),
                     [&](int a, int b) { return routing.slots[a] > routing.slots[b]; });
    // All givers' first parts before any second part, so that a giver's parts fill different
    // lanes.
    std::vector<std::pair<int, int64_t>> parts;
    for (int part = 0; part < kLanesPerMember; ++part) {
      for (int g : givers) {
        const int64_t amount = routing.slots[g] / kLanesPerMember + (part < routing.slots[g] % kLanesPerMember ? 1 : 0);
        if (amount > 0) parts.push_back({g, amount});
      }
    }
    size_t next = 0;
    for (int l = 0; l < lanes; ++l) {
      while (need[l] > 0 && next < parts.size()) {
        auto& [giver, left] = parts[next];
        const int64_t take = std::min(need[l], left);
        lane_slots[l][giver] += take;
        need[l] -= take;
        left -= take;
        if (left == 0) ++next;
      }
    }
    LimitHolders(network, routing, budgets, static_cast<int>(s), lane_slots);
  }
  return lane_slots;
}

// Lane l's tree, filled breadth-first from the source (see the header, step 4). `depth` is
// raised to the deepest member's depth; `unbudgeted` counts the members placed outside the
// budgets (below). Stays whole: its steps (order the waiting members, fill from the open
// parents, place the rest on spare slots) share the fill's state and read in the order they run.
Tree BuildLane(const Network& network, const LaneBudget& budget, std::vector<int64_t> slots, int& depth,
               int64_t& unbudgeted) {
  const std::vector<Site>& sites = network.sites;
  const int num_sites = static_cast<int>(sites.size());
  const int p = static_cast<int>(network.members.size());
  std::vector<std::vector<int64_t>> serves = budget.serves;
  // Per site, the members still to place: the most slots in this lane first (the first is the
  // site's entry), the rest in rank order.
  std::vector<std::vector<int>> waiting(num_sites);
  std::vector<size_t> placed(num_sites, 0);
  std::vector<std::vector<int>> targets(num_sites);  // the other sites each one serves
  for (int s = 0; s < num_sites; ++s) {
    for (int r : sites[s].members) {
      if (r != 0) waiting[s].push_back(r);
    }
    std::stable_sort(waiting[s].begin(), waiting[s].end(), [&](int a, int b) { return slots[a] > slots[b]; });
    for (int t = 0; t < num_sites; ++t) {
      if (t != s && serves[s][t] > 0) targets[s].push_back(t);
    }
  }
  auto has_waiting = [&](int site) { return placed[site] < waiting[site].size(); };
  // The site whose next member a parent in site `from` serves: members with children of their
  // own before leaves, so the lane keeps open parents; among those, its own site's first (no
  // other parent can open it, unless it is the source's), then a site not reached yet; then
  // the most slots. -1 when its budgets are spent.
  auto NextSite = [&](int from) {
    int best = -1;
    std::tuple<bool, bool, bool, int64_t> best_key;
    auto consider = [&](int to) {
      if (serves[from][to] <= 0 || !has_waiting(to)) return;
      const int64_t next_slots = slots[waiting[to][placed[to]]];
      const bool unreached = placed[to] == 0 && to != network.members[0].site;
      const std::tuple<bool, bool, bool, int64_t> key = {next_slots > 0, to == from, unreached, next_slots};
      if (best < 0 || key > best_key) {
        best = to;
        best_key = key;
      }
    };
    consider(from);
    for (int to : targets[from]) consider(to);
    return best;
  };

  Tree tree(p);
  std::vector<int> depth_of(p, 0);
  // (depth, order of arrival, rank), shallowest first: a parent gives all its slots before the
  // next one, as in a breadth-first fill.
  using Open = std::tuple<int, int64_t, int>;
  std::priority_queue<Open, std::vector<Open>, std::greater<Open>> open;
  int64_t arrivals = 0;
  open.push({0, arrivals++, 0});
  std::vector<int> spare;  // members left with slots no budget uses
  auto place = [&](int parent, int site) {
    const int child = waiting[site][placed[site]++];
    tree[parent].push_back(child);
    slots[parent] -= 1;
    depth_of[child] = depth_of[parent] + 1;
    depth = std::max(depth, depth_of[child]);
    if (slots[child] > 0) open.push({depth_of[child], arrivals++, child});
  };
  while (!open.empty()) {
    const auto [d, arrival, parent] = open.top();
    open.pop();
    const int from = network.members[parent].site;
    while (slots[parent] > 0) {
      const int to = NextSite(from);
      if (to < 0) {
        spare.push_back(parent);
        break;
      }
      serves[from][to] -= 1;
      place(parent, to);
    }
  }
  // A member left without a budgeted parent (where the budgets still wait on each other, which
  // CancelTransit and LimitHolders avoid but cannot always) takes a spare slot, in its own
  // site if there is one, else the source serves it beyond its slots. Pack then tries a lower
  // rate.
  for (int s = 0; s < num_sites; ++s) {
    while (has_waiting(s)) {
      ++unbudgeted;
      auto it = std::find_if(spare.begin(), spare.end(),
                             [&](int r) { return slots[r] > 0 && network.members[r].site == s; });
      if (it == spare.end()) it = std::find_if(spare.begin(), spare.end(), [&](int r) { return slots[r] > 0; });
      const int parent = it == spare.end() ? 0 : *it;
      slots[parent] = std::max<int64_t>(slots[parent], 1);
      place(parent, s);
    }
  }
  return tree;
}

struct Packing {
  double lane_bps = kUnshaped;
  double estimate_s = kUnshaped;
  int depth = 0;
  int64_t unbudgeted = 0;  // members placed outside the budgets, over all lanes
  std::vector<Tree> trees;
};

// The lanes at `lane_bps` that `routing` serves.
Packing PackAt(const Network& network, const Routing& routing, int lanes, double lane_bps, double payload_bits,
               double chunk_bits) {
  const std::vector<LaneBudget> budgets = SplitOverLanes(network, routing, lanes);
  const std::vector<std::vector<int64_t>> lane_slots = AssignSlots(network, routing, budgets);
  Packing packing;
  packing.lane_bps = lane_bps >= kFastestBps ? kUnshaped : lane_bps;
  for (int l = 0; l < lanes; ++l) {
    packing.trees.push_back(BuildLane(network, budgets[l], lane_slots[l], packing.depth, packing.unbudgeted));
  }
  packing.estimate_s = payload_bits / (lanes * lane_bps) + packing.depth * chunk_bits / lane_bps;
  return packing;
}

// The packing with `lanes` lanes at the largest rate that routes, or none when none does.
// Where its lanes cannot be filled within the budgets, a rate up to kMostRateGivenUp lower
// leaves members unused slots to do it with; if none does, the first packing is kept.
std::optional<Packing> Pack(const Network& network, int lanes, double payload_bits, double chunk_bits) {
  constexpr int kRateSteps = 10;
  constexpr double kMostRateGivenUp = 0.10;
  double lane_bps = kFastestBps;
  std::optional<Routing> routing = Route(network, lane_bps, lanes);
  if (!routing) {
    double lo = std::log(kSlowestBps);
    double hi = std::log(kFastestBps);
    if (!(routing = Route(network, kSlowestBps, lanes))) return std::nullopt;
    for (int i = 0; i < 64; ++i) {
      const double mid = (lo + hi) / 2;
      if (Route(network, std::exp(mid), lanes)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    lane_bps = std::exp(lo);
    routing = Route(network, lane_bps, lanes);
  }
  Packing first = PackAt(network, *routing, lanes, lane_bps, payload_bits, chunk_bits);
  if (first.unbudgeted == 0 || lane_bps >= kFastestBps) return first;
  for (int step = 1; step <= kRateSteps; ++step) {
    const double lower_bps = lane_bps * (1 - kMostRateGivenUp * step / kRateSteps);
    if (std::optional<Routing> lower = Route(network, lower_bps, lanes)) {
      Packing packing = PackAt(network, *lower, lanes, lower_bps, payload_bits, chunk_bits);
      if (packing.unbudgeted == 0) return packing;
    }
  }
  return first;
}

}  // namespace

Result<Plan> UploadPackingPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                            const PlanOptions& options) const {
  GRIDCAST_RETURN_IF_ERROR(CheckSwitchTree(net));
  GRIDCAST_ASSIGN_OR_RETURN(Ranks ranks, ResolveRanks(net, options));
  Plan plan = StartPlan(net, ranks, payload_bytes, options, name());
  Network network{net, {}, OrderSites(net, ranks)};
  network.members.resize(ranks.size());
  for (int s = 0; s < static_cast<int>(network.sites.size()); ++s) {
    for (int r : network.sites[s].members) {
      const Node& node = net.nodes[ranks.nodes[r]];
      network.members[r] = {node.up_bps, node.down_bps, s};
    }
  }

  const double payload_bits = static_cast<double>(payload_bytes) * 8;
  const double chunk_bits = static_cast<double>(std::min(payload_bytes, plan.chunk_bytes)) * 8;
  std::optional<Packing> best;
  const int max_lanes = LanesWithChunks(plan.NumChunks(), kMaxLanes);
  if (lanes_ < 0 || lanes_ > max_lanes) {
    return Status::InvalidArgument("upload-packing: " + std::to_string(lanes_) + " lanes asked, 1 to " +
                                   std::to_string(max_lanes) + " possible with " +
                                   std::to_string(plan.NumChunks()) + " chunks");
  }
  for (int lanes = lanes_ > 0 ? lanes_ : 1; lanes <= (lanes_ > 0 ? lanes_ : max_lanes); ++lanes) {
    std::optional<Packing> packing = Pack(network, lanes, payload_bits, chunk_bits);
    // A packing within its budgets before any that is not.
    if (packing && (!best || std::make_pair(packing->unbudgeted > 0, packing->estimate_s) <
                                 std::make_pair(best->unbudgeted > 0, best->estimate_s * (1 - kRoundingSlack)))) {
      best = std::move(packing);
    }
  }
  if (!best) return Status::InvalidArgument("upload-packing: no lane rate routes on this network");
  const int lanes = static_cast<int>(best->trees.size());
  for (int l = 0; l < lanes; ++l) {
    plan.lanes.push_back(TreeLane(0, InterleavedChunks(plan.NumChunks(), lanes, l),
                                  std::move(best->trees[l]), options.streams));
  }
  // Lanes of one rate on paper run at what TCP gives each edge: drawing chunks from one pool
  // lets them end together (docs/collectives.md, "The last lane decides"). A pool is a list at
  // every member, so past kMaxSharedLaneChunks the lanes keep the chunks they were given.
  plan.shared_chunks = lanes > 1 && plan.NumChunks() <= kMaxSharedLaneChunks;
  // A window of a quarter second at the lane's rate keeps a lane busy across a WAN's round
  // trip and commits few chunks. Where one chunk lasts that long, one: a chunk held in flight
  // at each hop is one the lane still delivers once the other lanes are done, and while an
  // edge waits for its acknowledgement the member's other edges (every member uploads in
  // several lanes) take its share of the uplink.
  plan.window_chunks = static_cast<int>(
      std::clamp(std::ceil(best->lane_bps * kWindowSeconds / chunk_bits), 1.0, double{kMaxWindowChunks}));
  plan.rationale = std::to_string(lanes) + (lanes == 1 ? " lane" : " lanes") + " of " +
                   FormatRate(best->lane_bps) + ", tree depth " + std::to_string(best->depth);
  if (best->unbudgeted > 0) {
    plan.rationale += "; " + std::to_string(best->unbudgeted) +
                      " placements beyond their parent's slots or routed uplinks";
  }
  return plan;
}

}  // namespace gridcast
