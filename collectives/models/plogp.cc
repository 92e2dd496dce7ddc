#include "collectives/models/plogp.h"

#include <algorithm>
#include <cassert>

#include "collectives/models/model_math.h"

namespace gridcast::models {

Result<PiecewiseLinear> PiecewiseLinear::Create(std::vector<SizeSample> samples) {
  if (samples.empty()) return Status::InvalidArgument("a piecewise-linear curve needs a sample");
  for (size_t i = 0; i < samples.size(); ++i) {
    GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("sample size_bytes", samples[i].size_bytes));
    GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("sample seconds", samples[i].seconds));
    if (i > 0 && !(samples[i].size_bytes > samples[i - 1].size_bytes)) {
      return Status::InvalidArgument("sample sizes must be strictly increasing");
    }
  }
  return PiecewiseLinear(std::move(samples));
}

double PiecewiseLinear::operator()(double size_bytes) const {
  assert(size_bytes >= 0);
  if (samples_.size() == 1) return samples_[0].seconds;
  // The segment [i-1, i] containing size_bytes, or the end segment to extend.
  auto upper = std::upper_bound(samples_.begin(), samples_.end(), size_bytes,
                                [](double s, const SizeSample& x) { return s < x.size_bytes; });
  const size_t i = std::clamp<size_t>(upper - samples_.begin(), 1, samples_.size() - 1);
  const SizeSample& a = samples_[i - 1];
  const SizeSample& b = samples_[i];
  const double slope = (b.seconds - a.seconds) / (b.size_bytes - a.size_bytes);
  return std::max(0.0, a.seconds + slope * (size_bytes - a.size_bytes));
}

Result<PLogPParams> LinearPLogP(double latency_s, double gap0_s, double bandwidth_Bps,
                                double overhead_s) {
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("latency_s", latency_s));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("gap0_s", gap0_s));
  GRIDCAST_RETURN_IF_ERROR(CheckPositive("bandwidth_Bps", bandwidth_Bps));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("overhead_s", overhead_s));
  // Two samples one megabyte apart define the line; evaluation extends it beyond.
  constexpr double kSpan = 1 << 20;
  GRIDCAST_ASSIGN_OR_RETURN(
      PiecewiseLinear gap,
      PiecewiseLinear::Create({{0, gap0_s}, {kSpan, gap0_s + kSpan / bandwidth_Bps}}));
  GRIDCAST_ASSIGN_OR_RETURN(PiecewiseLinear overhead, PiecewiseLinear::Create({{0, overhead_s}}));
  return PLogPParams{latency_s, std::move(gap), overhead, overhead};
}

}  // namespace gridcast::models
