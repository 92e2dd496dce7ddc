#include "delta/base_change.h"

#include <algorithm>
#include <string>

#include "common/splitmix64.h"

namespace gridcast {

Result<BaseChange> ParseBaseChange(std::string_view name) {
  for (BaseChange kind : kAllBaseChanges) {
    if (BaseChangeName(kind) == name) return kind;
  }
  return Status::InvalidArgument("unknown base change '" + std::string(name) +
                                 "': expected same, scattered, insert, append or prepend");
}

std::string_view BaseChangeName(BaseChange kind) {
  switch (kind) {
    case BaseChange::kSame: return "same";
    case BaseChange::kScattered: return "scattered";
    case BaseChange::kInsert: return "insert";
    case BaseChange::kAppend: return "append";
    case BaseChange::kPrepend: return "prepend";
  }
  return "?";
}

std::vector<Edit> BaseChangeEdits(BaseChange kind, uint64_t size) {
  constexpr uint64_t kKiB = 1024;
  switch (kind) {
    case BaseChange::kSame: return {};
    case BaseChange::kScattered: {
      // Eight runs of size / 800 bytes, one in the middle of each eighth.
      constexpr uint64_t kPlaces = 8;
      const uint64_t run = size / 800;
      if (run == 0) return {};
      std::vector<Edit> edits;
      for (uint64_t p = 0; p < kPlaces; ++p) {
        edits.push_back({size * p / kPlaces + size / kPlaces / 2 - run / 2, run, run});
      }
      return edits;
    }
    case BaseChange::kInsert: return {{size / 2, 0, 64 * kKiB}};
    case BaseChange::kAppend: return {{size, 0, 4096 * kKiB}};
    case BaseChange::kPrepend: return {{0, 0, 4 * kKiB}};
  }
  return {};
}

std::vector<uint8_t> ApplyEdits(std::span<const uint8_t> old, std::span<const Edit> edits, uint64_t seed) {
  SplitMix64 random(seed);
  std::vector<uint8_t> out;
  uint64_t next = 0;  // the first old byte not yet copied
  for (const Edit& edit : edits) {
    const uint64_t at = std::min<uint64_t>(std::max(edit.offset, next), old.size());
    out.insert(out.end(), old.begin() + next, old.begin() + at);
    const size_t start = out.size();
    out.resize(start + edit.inserted);
    FillPseudoRandom(std::span<uint8_t>(out).subspan(start), random);
    next = std::min<uint64_t>(at + edit.removed, old.size());
  }
  out.insert(out.end(), old.begin() + next, old.end());
  return out;
}

}  // namespace gridcast
