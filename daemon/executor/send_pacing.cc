#include "daemon/executor/send_pacing.h"

#include <algorithm>

namespace gridcast {

bool SendPacing::Observe(Clock::time_point now, uint64_t acked_bytes, double caps_bytes_per_s, bool balancing) {
  if (balancing) settled_at_ = now + kWindow;
  if (!started_ || now < settled_at_) {
    started_ = true;
    window_start_ = last_ = now;
    last_caps_ = caps_bytes_per_s;
    window_bytes_ = window_allowed_ = 0;
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

std::vector<bool> SendPacing::Yielding(const std::vector<PacedSend>& sends) {
  std::vector<bool> yielding(sends.size(), false);
  double behind = 0;
  int keeping_up = 0;
  for (const PacedSend& send : sends) {
    if (!send.open || !send.keeps_up) continue;
    behind = keeping_up++ == 0 ? send.position_s : std::min(behind, send.position_s);
  }
  if (keeping_up == 0) return yielding;
  for (size_t i = 0; i < sends.size(); ++i) yielding[i] = sends[i].open && sends[i].position_s > behind + kLead;
  return yielding;
}

}  // namespace gridcast
