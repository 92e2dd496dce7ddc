#include "tomography/bandwidth_estimate.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace gridcast {
namespace {

struct RunRate {
  double bps = 0;
  int active_bins = 0;
  double bin_cv = 0;  // coefficient of variation of the active bins
};

std::vector<double> Series(const Observations& run, const std::set<std::string>& from,
                           const std::set<std::string>& to) {
  std::vector<double> series;
  for (const PairObservation& p : run.pairs) {
    if (!from.count(p.from) || !to.count(p.to)) continue;
    if (series.size() < p.bytes_per_bin.size()) series.resize(p.bytes_per_bin.size(), 0.0);
    for (size_t k = 0; k < p.bytes_per_bin.size(); ++k)
      series[k] += static_cast<double>(p.bytes_per_bin[k]);
  }
  return series;
}

std::optional<RunRate> RateOf(const std::vector<double>& series, double bin_s,
                              const BandwidthOptions& options) {
  std::vector<double> positive;
  for (double b : series) {
    if (b > 0) positive.push_back(b);
  }
  if (positive.empty()) return std::nullopt;
  std::sort(positive.begin(), positive.end());
  const double q = std::clamp(options.peak_quantile, 0.0, 1.0);
  const double peak =
      positive[static_cast<size_t>(std::floor(q * static_cast<double>(positive.size() - 1)))];
  const double threshold = options.active_fraction * peak;
  double bytes = 0, squares = 0;
  int active = 0;
  for (double b : positive) {
    if (b < threshold) continue;
    bytes += b;
    squares += b * b;
    ++active;
  }
  if (active == 0) return std::nullopt;  // active_fraction > 1: nothing reaches the peak
  RunRate rate;
  rate.active_bins = active;
  rate.bps = 8 * bytes / (active * bin_s);
  const double mean = bytes / active;
  rate.bin_cv = mean > 0 ? std::sqrt(std::max(0.0, squares / active - mean * mean)) / mean : 0;
  return rate;
}

RateEstimate Combine(const std::vector<RunRate>& rates) {
  RateEstimate out;
  if (rates.empty()) return out;
  std::vector<double> bps;
  for (const RunRate& r : rates) {
    bps.push_back(r.bps);
    out.samples += r.active_bins;
  }
  out.runs = static_cast<int>(rates.size());
  std::sort(bps.begin(), bps.end());
  const size_t mid = bps.size() / 2;
  out.bps = bps.size() % 2 ? bps[mid] : (bps[mid - 1] + bps[mid]) / 2;
  if (rates.size() == 1) {
    out.relative_spread = rates.front().bin_cv;
  } else {
    out.relative_spread = out.bps > 0 ? (bps.back() - bps.front()) / out.bps : 0;
  }
  return out;
}

}  // namespace

RateEstimate EstimateFlowRate(const std::vector<Observations>& runs,
                              const std::set<std::string>& from, const std::set<std::string>& to,
                              const BandwidthOptions& options) {
  std::vector<RunRate> rates;
  for (const Observations& run : runs) {
    if (auto rate = RateOf(Series(run, from, to), run.bin_s, options)) rates.push_back(*rate);
  }
  return Combine(rates);
}

RateEstimate EstimateReceiveRate(const std::vector<Observations>& runs,
                                 const std::set<std::string>& members,
                                 const BandwidthOptions& options) {
  std::set<std::string> everyone;
  std::vector<RunRate> rates;
  for (const Observations& run : runs) {
    everyone.clear();
    int receivers = 0;
    for (const MemberObservation& m : run.members) {
      everyone.insert(m.name);
      if (m.name != run.source && members.count(m.name)) ++receivers;
    }
    if (receivers == 0) continue;
    if (auto rate = RateOf(Series(run, everyone, members), run.bin_s, options)) {
      rate->bps /= receivers;
      rates.push_back(*rate);
    }
  }
  return Combine(rates);
}

}  // namespace gridcast
