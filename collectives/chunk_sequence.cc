#include "collectives/chunk_sequence.h"

#include <algorithm>

namespace gridcast {

namespace {

// The index of the last entry of `sorted` whose `key` is at most `value`, or -1.
template <typename T, typename Key>
int64_t LastAtMost(const std::vector<T>& sorted, uint64_t value, Key key) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), value,
                             [&](uint64_t v, const T& entry) { return v < key(entry); });
  return static_cast<int64_t>(it - sorted.begin()) - 1;
}

}  // namespace

ChunkSequence::ChunkSequence(std::vector<ChunkRange> ranges) {
  std::erase_if(ranges, [](const ChunkRange& r) { return r.Count() == 0; });
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const ChunkRange& a, const ChunkRange& b) { return a.begin < b.begin; });
  ranges_ = std::move(ranges);
  for (const ChunkRange& range : ranges_) {
    first_.push_back(size_);
    size_ += range.Count();
    reach_.push_back(std::max(reach_.empty() ? 0 : reach_.back(), range.Last()));
  }
}

uint64_t ChunkSequence::operator[](uint64_t position) const {
  const auto i = static_cast<size_t>(LastAtMost(first_, position, [](uint64_t first) { return first; }));
  return ranges_[i].begin + (position - first_[i]) * ranges_[i].step;
}

std::optional<uint64_t> ChunkSequence::PositionOf(uint64_t chunk) const {
  for (int64_t i = LastAtMost(ranges_, chunk, [](const ChunkRange& r) { return r.begin; });
       i >= 0 && reach_[i] >= chunk; --i) {
    const ChunkRange& range = ranges_[i];
    if (range.Contains(chunk)) return first_[i] + (chunk - range.begin) / range.step;
  }
  return std::nullopt;
}

ChunkOwners::ChunkOwners(const std::vector<std::vector<ChunkRange>>& ranges) {
  for (size_t owner = 0; owner < ranges.size(); ++owner) {
    for (const ChunkRange& range : ranges[owner]) {
      if (range.Count() == 0) continue;
      auto step = std::find_if(steps_.begin(), steps_.end(), [&](const Step& s) { return s.step == range.step; });
      if (step == steps_.end()) step = steps_.insert(steps_.end(), Step{range.step, {}});
      const uint64_t remainder = range.begin % range.step;
      auto residue = std::find_if(step->residues.begin(), step->residues.end(),
                                  [&](const Residue& r) { return r.remainder == remainder; });
      if (residue == step->residues.end()) residue = step->residues.insert(step->residues.end(), Residue{remainder, {}, {}});
      residue->runs.push_back({range.begin, range.Last(), static_cast<int>(owner)});
    }
  }
  for (Step& step : steps_) {
    std::sort(step.residues.begin(), step.residues.end(),
              [](const Residue& a, const Residue& b) { return a.remainder < b.remainder; });
    for (Residue& residue : step.residues) {
      std::stable_sort(residue.runs.begin(), residue.runs.end(), [](const Run& a, const Run& b) { return a.begin < b.begin; });
      for (const Run& run : residue.runs) {
        residue.reach.push_back(std::max(residue.reach.empty() ? 0 : residue.reach.back(), run.last));
      }
    }
  }
}

int ChunkOwners::OwnerOf(uint64_t chunk) const {
  for (const Step& step : steps_) {
    const uint64_t remainder = chunk % step.step;
    auto residue = std::lower_bound(step.residues.begin(), step.residues.end(), remainder,
                                    [](const Residue& r, uint64_t v) { return r.remainder < v; });
    if (residue == step.residues.end() || residue->remainder != remainder) continue;
    for (int64_t i = LastAtMost(residue->runs, chunk, [](const Run& r) { return r.begin; });
         i >= 0 && residue->reach[i] >= chunk; --i) {
      // Same step and remainder as the chunk, begin <= chunk <= last: the run holds it.
      if (residue->runs[i].last >= chunk) return residue->runs[i].owner;
    }
  }
  return -1;
}

}  // namespace gridcast
