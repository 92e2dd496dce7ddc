// CpuReadings: one process's CPU seconds read over time, so that what it used from a moment
// learnt only afterwards (a broadcast's first byte, an MPI program's timed region) can be told.
// Bounded: at kMaxReadings it drops every other reading but the first and the latest, so a run
// of hours costs what one of minutes does; the older readings are then further apart.
// Thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace gridcast {

class CpuReadings {
 public:
  using Clock = std::chrono::system_clock;
  static constexpr size_t kMaxReadings = 4096;

  // Readings come in time order (a reading older than the last one is ignored).
  void Add(Clock::time_point at, double cpu_s);
  bool empty() const { return readings_.empty(); }
  double first() const { return readings_.front().cpu_s; }  // REQUIRES: !empty()
  Clock::time_point first_at() const { return readings_.front().at; }  // REQUIRES: !empty()
  double last() const { return readings_.back().cpu_s; }    // REQUIRES: !empty()
  // The CPU seconds at `at`, linear between the readings either side of it; the first reading
  // before the first, the last after the last. REQUIRES: !empty().
  double At(Clock::time_point at) const;
  size_t size() const { return readings_.size(); }

 private:
  struct Reading {
    Clock::time_point at;
    double cpu_s;
  };
  std::vector<Reading> readings_;
};

}  // namespace gridcast
