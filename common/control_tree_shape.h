// The control tree's shape (docs/scale.md): member 0, the source, at the root, and member m's
// children fanout * m + 1 ... fanout * m + fanout. The control plane's Prepare, Start, progress
// and Cancel travel it (daemon/coordinator/control_tree.h), and a swarm plan's digest tree has
// the same shape, so the members a digest-tree parent dials are in its slice of the plan.
#pragma once

#include <vector>

namespace gridcast {

// The fanout when a Prepare names none (PrepareRequest.control_fanout 0: the caller prepares
// every member itself).
inline constexpr int kDefaultControlFanout = 8;

// REQUIRES: fanout >= 1, 0 <= member < members. -1 for member 0.
int ControlParent(int member, int fanout);
std::vector<int> ControlChildren(int member, int members, int fanout);
// `member` and every member below it.
std::vector<int> ControlSubtree(int member, int members, int fanout);

}  // namespace gridcast
