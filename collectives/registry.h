// The planner registry: every algorithm by name, for the CLI, the daemon and auto.
//
// Names may carry one integer parameter after a colon ("knomial:4", "splitstream:3");
// without it the planner's default applies. Thread-safe (no mutable state).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/planner.h"
#include "include/gridcast/result.h"

namespace gridcast {

// kBroadcast and kAllToAll plans are push trees; kSwarm plans are pull (BitTorrent) swarms.
enum class PlannerKind { kBroadcast, kAllToAll, kSwarm };

struct PlannerInfo {
  std::string name;      // canonical, with the default parameter if it takes one
  PlannerKind kind;
  std::string summary;   // one line for --help and docs
  bool lane_per_member = false;  // its plans have one lane per member (scatter-allgather)
  // Its plans have up to 16 slow lanes and want small chunks (upload-packing): costly to
  // simulate at thousands of members.
  bool many_lanes = false;
};

// InvalidArgument for an unknown name or a bad parameter, listing the known names.
Result<std::unique_ptr<Planner>> MakePlanner(std::string_view name);

// Every registered planner, broadcast ones first.
const std::vector<PlannerInfo>& ListPlanners();

// The planner a name names without its parameter: "knomial" of "knomial:4" (and of "knomial").
std::string_view PlannerBaseName(std::string_view name);

// The registered planner `name` names ("knomial:4" names knomial), parameter unchecked
// (MakePlanner checks it); nullptr for an unknown name.
const PlannerInfo* FindPlanner(std::string_view name);

}  // namespace gridcast
