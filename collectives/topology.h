// ParseTopology: the one parser of topology files (../shared/design/topology.md).
//
// Takes the file's text (callers read files at the edge) and returns the NetworkModel, or an
// InvalidArgument whose message starts with "line N: FIELD: " naming where the file is wrong:
// unknown or duplicate names, unknown parents, cycles, bad rate units, missing or unknown
// fields, an empty network. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "collectives/network_model.h"
#include "include/gridcast/result.h"

namespace gridcast {

Result<NetworkModel> ParseTopology(std::string_view yaml_text);

// Whether a switch or node may be named `name`: 1 to 64 letters, digits, '-', '_', '.' (names
// become namespace, interface-group and file names).
bool IsTopologyName(std::string_view name);

// Writes `model` back as a topology file that ParseTopology() reads to an equal model (one
// group per node, names explicit). Used to save inferred topologies.
std::string FormatTopology(const NetworkModel& model);

}  // namespace gridcast
