#include "deploy/cpu_readings.h"

#include <algorithm>

namespace gridcast {

void CpuReadings::Add(Clock::time_point at, double cpu_s) {
  if (!readings_.empty() && at < readings_.back().at) return;
  readings_.push_back({at, cpu_s});
  if (readings_.size() < kMaxReadings) return;
  size_t kept = 1;
  for (size_t i = 2; i + 1 < readings_.size(); i += 2) readings_[kept++] = readings_[i];
  readings_[kept++] = readings_.back();
  readings_.resize(kept);
}

double CpuReadings::At(Clock::time_point at) const {
  const auto after = std::upper_bound(readings_.begin(), readings_.end(), at,
                                      [](Clock::time_point t, const Reading& r) { return t < r.at; });
  if (after == readings_.begin()) return readings_.front().cpu_s;
  if (after == readings_.end()) return readings_.back().cpu_s;
  const Reading& before = *(after - 1);
  const double span = std::chrono::duration<double>(after->at - before.at).count();
  const double into = std::chrono::duration<double>(at - before.at).count();
  return span <= 0 ? after->cpu_s : before.cpu_s + (after->cpu_s - before.cpu_s) * into / span;
}

}  // namespace gridcast
