// Sites: the members under one switch, ordered outward from the source, each with the site
// that feeds it. Shared by the planners that pack lanes site by site (capacity,
// upload-packing).
#pragma once

#include <vector>

#include "collectives/network_model.h"
#include "collectives/planners/planner_util.h"

namespace gridcast {

// Counting a member's slots (children it can serve at a lane's rate): rates above
// kFastestBps count as unshaped, then only what the lanes need limits them; kRoundingSlack is
// the relative slack that lets a rate exactly at a multiple of the lane's yield that many.
inline constexpr double kFastestBps = 1e15;
inline constexpr double kSlowestBps = 1.0;
inline constexpr double kRoundingSlack = 1e-9;

struct Site {
  int switch_index = 0;
  std::vector<int> members;      // ranks; the source's site lists rank 0 first
  int feeder = -1;               // the site that feeds this one; -1 for the source's site
  std::vector<int> fed;          // the sites this one feeds, in site order
  double route_bps = kUnshaped;  // the narrowest uplink from the feeder
};

// Sites in breadth-first order of the switch tree from the source's switch, each with its
// feeder: the earlier site reached over the fewest uplinks, then over the widest bottleneck.
// REQUIRES: CheckSwitchTree(net).ok().
std::vector<Site> OrderSites(const NetworkModel& net, const Ranks& ranks);

}  // namespace gridcast
