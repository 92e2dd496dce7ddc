// ChunkSequence and ChunkOwners: the chunks of a plan's ranges without listing them.
//
// A plan of 2^30 chunks cannot afford a list per lane (8 bytes a chunk) or a lane number per
// chunk at every member; its lanes name their chunks as a few ranges, and both questions a
// member asks of them (the n-th chunk a lane carries, and which lane carries a chunk) have
// answers computed from the ranges in O(log ranges). Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/plan.h"

namespace gridcast {

// The chunks of some ranges in the order a member passes them on: the ranges sorted by their
// first chunk, each in increasing order, one after the other. Where no two ranges interleave
// (every planner's lanes) that is increasing chunk order.
class ChunkSequence {
 public:
  ChunkSequence() = default;
  explicit ChunkSequence(std::vector<ChunkRange> ranges);

  uint64_t size() const { return size_; }
  // REQUIRES: position < size().
  uint64_t operator[](uint64_t position) const;
  // The position of `chunk`, or nullopt when no range holds it. With overlapping ranges (not
  // a valid lane) its position in one of them.
  std::optional<uint64_t> PositionOf(uint64_t chunk) const;

 private:
  std::vector<ChunkRange> ranges_;     // non-empty, sorted by begin
  std::vector<uint64_t> first_;        // position of each range's first chunk
  std::vector<uint64_t> reach_;        // the largest Last() of ranges_[0..i]
  uint64_t size_ = 0;
};

// Which of several sequences (a plan's fixed lanes) holds a chunk. Ranges are grouped by step
// and, within a step, by their first chunk's remainder; a lookup is a binary search per step
// present (planners use one step per plan).
class ChunkOwners {
 public:
  // `ranges[i]` are the ranges of owner i.
  explicit ChunkOwners(const std::vector<std::vector<ChunkRange>>& ranges);

  // The owner of `chunk`, or -1 when none holds it.
  int OwnerOf(uint64_t chunk) const;

 private:
  struct Run {
    uint64_t begin = 0;
    uint64_t last = 0;
    int owner = 0;
  };
  struct Residue {
    uint64_t remainder = 0;
    std::vector<Run> runs;         // sorted by begin
    std::vector<uint64_t> reach;   // the largest last of runs[0..i]
  };
  struct Step {
    uint64_t step = 1;
    std::vector<Residue> residues;  // sorted by remainder
  };
  std::vector<Step> steps_;
};

}  // namespace gridcast
