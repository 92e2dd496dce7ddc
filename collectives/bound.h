// The physical lower bound on the time of a broadcast (design/topology.md, "The physical lower
// bound"): no plan on this network can finish faster, so bound / time is a plan's efficiency.
//
// The bound is the largest of five cut terms: the source's upload, each receiver's download,
// each uplink that receivers sit behind, the total upload of all members, and for each uplink
// the receivers behind it against what can enter their side (the uplink plus their own
// uploads). Only members count, as receivers and as uploaders. Rates are bits per second;
// unshaped (+infinity) rates make their terms 0. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/network_model.h"

namespace gridcast {

// Which cut of topology.md binds; values are used in rationale text only.
enum class BoundTerm {
  kNone,              // nothing to send: no receivers or no bytes
  kSourceUpload,      // M / up(s)
  kReceiverDownload,  // M / down(v)
  kUplink,            // M / rate(e) toward the receivers behind e
  kTotalUpload,       // (n - 1) M / sum of up
  kCutUpload,         // k M / (rate(e) toward S + sum of up in S)
};

struct BroadcastBound {
  double seconds = 0;
  BoundTerm term = BoundTerm::kNone;
  // The node (kSourceUpload, kReceiverDownload) or switch whose uplink (kUplink, kCutUpload)
  // the binding term is about; -1 otherwise.
  int where = -1;
};

// The bound and the term that sets it (on ties, the term found first: source, receivers,
// total upload, then per switch its uplink and its cut).
// `member_nodes` are node indices of `net`; empty means every node. The source is a member
// whether listed or not; duplicates count once.
// REQUIRES: source_node and every member are node indices of net.
BroadcastBound ComputeBroadcastBound(const NetworkModel& net, int source_node,
                                     const std::vector<int>& member_nodes, uint64_t payload_bytes);

// ComputeBroadcastBound(...).seconds.
double BroadcastBoundSeconds(const NetworkModel& net, int source_node,
                             const std::vector<int>& member_nodes, uint64_t payload_bytes);

// The physical lower bound on an all-to-all (allgather): member `part_nodes[i]` holds
// `part_bytes[i]` and every member ends with all parts. The largest of: each member's download
// of the parts it lacks, each member's upload of its own part (it must leave once), the total
// upload of (members - 1) copies of everything, and per switch uplink the parts that must cross
// it in each direction (those on one side, when the other side has members). Nodes listed
// twice count once with their parts summed. REQUIRES: part_nodes are node indices of net, as
// many as part_bytes.
double AllgatherBoundSeconds(const NetworkModel& net, const std::vector<int>& part_nodes,
                             const std::vector<uint64_t>& part_bytes);

// One line for a rationale, e.g. "uplink of switch nancy" or "download of lyon-3 (100mbit)".
std::string DescribeBound(const BroadcastBound& bound, const NetworkModel& net);

}  // namespace gridcast
