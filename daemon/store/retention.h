// Retention: which complete payloads a store lets go, so that a node that receives dataset
// after dataset does not fill its disk (or its memory) until a broadcast fails for space.
//
// A policy per store (the data directory, the memory directory): a maximum age (since the
// payload arrived here) and a maximum of bytes. Past the age a payload goes; then, oldest
// first, until the rest fit the bytes. What goes is a top-level name of the store: a file, or
// a directory with all below it (a directory payload, or payloads sent as DIR/NAME), as
// `gridcast remove` takes it. A name that holds a partial copy (resumable) is kept whole, as
// is everything under .gridcast/; the Participant removes what is chosen through Remove(),
// which refuses a payload a broadcast is using.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gridcast {

struct RetentionPolicy {
  std::optional<std::chrono::seconds> max_age;
  uint64_t max_bytes = 0;  // 0: no bound
  bool any() const { return max_age.has_value() || max_bytes > 0; }
};

struct HeldEntry {
  std::string name;  // a top-level name of the store
  uint64_t bytes = 0;
  // When it arrived: the latest status change (ctime) of it and all below it. Not the
  // modification time, which an unpacked directory takes from its source.
  std::chrono::system_clock::time_point arrived;
};

// Names to remove, oldest first. Pure.
std::vector<std::string> ChooseForRemoval(std::vector<HeldEntry> held, std::chrono::system_clock::time_point now,
                                          const RetentionPolicy& policy);

// The top-level names of the store at `dir` that hold complete payloads only (no .part below
// them), but .gridcast. Links are neither followed nor counted.
std::vector<HeldEntry> ScanStore(const std::string& dir);

}  // namespace gridcast
