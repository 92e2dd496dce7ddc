// The changes `gridcast bench --base-change KIND` makes to a base payload before sending it
// again (issue 36), as edits, so that a benchmark, a test and a generator of files make the
// same ones:
//   same       nothing changes
//   scattered  1% of the bytes rewritten in 8 places spread over the payload
//   insert     64 KiB inserted in the middle
//   append     4 MiB appended
//   prepend    4 KiB inserted at the front
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

enum class BaseChange { kSame, kScattered, kInsert, kAppend, kPrepend };

// InvalidArgument naming the kinds for anything else.
Result<BaseChange> ParseBaseChange(std::string_view name);
std::string_view BaseChangeName(BaseChange kind);
inline constexpr BaseChange kAllBaseChanges[] = {BaseChange::kSame, BaseChange::kScattered, BaseChange::kInsert,
                                                 BaseChange::kAppend, BaseChange::kPrepend};

// At `offset` of the old payload, `removed` bytes give way to `inserted` new ones.
struct Edit {
  uint64_t offset = 0;
  uint64_t removed = 0;
  uint64_t inserted = 0;
};

// The edits of `kind` on a payload of `size` bytes, in offset order, not overlapping.
std::vector<Edit> BaseChangeEdits(BaseChange kind, uint64_t size);

// `old` with `edits` applied; inserted bytes are pseudo-random from `seed`.
std::vector<uint8_t> ApplyEdits(std::span<const uint8_t> old, std::span<const Edit> edits, uint64_t seed);

}  // namespace gridcast
