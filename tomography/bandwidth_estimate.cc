#include "tomography/bandwidth_estimate.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace gridcast {
namespace {

struct RunRate {
  double bps = 0;
  int bins = 0;           // bins at or above the rate
  double top_spread = 0;  // (largest bin - the rate's bin) / the rate's bin
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
  if (positive.empty() || bin_s <= 0) return std::nullopt;
  std::sort(positive.begin(), positive.end(), std::greater<>());
  // A flow with fewer busy bins than that never held any rate that long: its weakest bin.
  const auto wanted = static_cast<size_t>(std::max(1.0, std::ceil(options.sustained_s / bin_s - 1e-9)));
  const size_t k = std::min(wanted, positive.size());
  RunRate rate;
  rate.bins = static_cast<int>(k);
  rate.bps = 8 * positive[k - 1] / bin_s;
  rate.top_spread = (positive.front() - positive[k - 1]) / positive[k - 1];
  return rate;
}

RateEstimate Combine(const std::vector<RunRate>& rates) {
  RateEstimate out;
  if (rates.empty()) return out;
  double low = rates.front().bps;
  for (const RunRate& r : rates) {
    out.bps = std::max(out.bps, r.bps);
    low = std::min(low, r.bps);
    out.samples += r.bins;
  }
  out.runs = static_cast<int>(rates.size());
  if (rates.size() == 1) {
    out.relative_spread = rates.front().top_spread;
  } else {
    out.relative_spread = out.bps > 0 ? (out.bps - low) / out.bps : 0;
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
