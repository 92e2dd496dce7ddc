// BandwidthGroups: the parts of a network that are joined by links at least as fast as the
// nodes they serve, i.e. separated only by real bottlenecks.
//
// An uplink is a bottleneck when it carries less (in either direction) than the NICs below it
// could send or receive together; switches joined by non-bottleneck uplinks form one group.
// On two sites behind 400 and 50 Mbit uplinks with eight 100 Mbit NICs each, the two sites are
// two groups; on one switch (or under fat uplinks) everything is one group. The pull planner
// keeps stripes and peers inside a group, and tomography's ground truth is this partition.
// Pure; thread-safe.
#pragma once

#include <vector>

#include "collectives/network_model.h"

namespace gridcast {

// Group index per switch, 0..groups-1, numbered in switch order.
std::vector<int> SwitchBandwidthGroups(const NetworkModel& net);

}  // namespace gridcast
