#include "daemon/executor/send_pacing.h"

#include <algorithm>

namespace gridcast {

bool SendPacing::Observe(Clock::time_point now, uint64_t acked_bytes, double caps_bytes_per_s) {
  if (!started_) {
    started_ = true;
    window_start_ = last_ = now;
    last_caps_ = caps_bytes_per_s;
    return false;
  }
  window_bytes_ += static_cast<double>(acked_bytes);
  window_allowed_ += std::max(last_caps_, caps_bytes_per_s) * std::chrono::duration<double>(now - last_).count();
  last_ = now;
  last_caps_ = caps_bytes_per_s;
  if (now - window_start_ < kWindow) return false;
  const double taken = window_allowed_ > 0 ? window_bytes_ / window_allowed_ : 0;
  window_start_ = now;
  window_bytes_ = window_allowed_ = 0;
  if (taken < kAtCaps) return false;
  growth_ *= kGrowth;
  return true;
}

}  // namespace gridcast
