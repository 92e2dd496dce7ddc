// The sum a progress round carries up the control tree (control_tree.h): counts, chunks, the
// slowest member still receiving, and by name only the members that need attention, so its
// size does not grow with the members while they are healthy.
#pragma once

#include <string>

#include "proto/control.pb.h"

namespace gridcast {

// Adds one member to `sum`: done (its chunk list has `chunk_list_digest`; empty while the
// source does not know it yet), still receiving (and then perhaps the slowest), or needing
// attention (lane trouble, or neither done nor receiving). A receiving member with lane
// trouble is both: the source weighs the reports of the member behind every other against it
// (plan_repairer.h).
void CountMember(const v1::MemberProgress& entry, const std::string& chunk_list_digest, v1::SubtreeProgress* sum);

// Adds the sum of another subtree to `sum`.
void AddSum(const v1::SubtreeProgress& add, v1::SubtreeProgress* sum);

}  // namespace gridcast
