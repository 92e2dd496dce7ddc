#include "collectives/models/plogp_tables.h"

#include <algorithm>
#include <cmath>

#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

Status CheckInputs(const PLogPParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("latency_s", params.latency_s));
  return CheckNonNegative("m_bytes", m_bytes);
}

}  // namespace

std::string_view PLogPBroadcastName(PLogPBroadcast algorithm) {
  switch (algorithm) {
    case PLogPBroadcast::kFlat:
      return "flat";
    case PLogPBroadcast::kFlatRendezvous:
      return "flat-rendezvous";
    case PLogPBroadcast::kSegmentedFlat:
      return "segmented-flat";
    case PLogPBroadcast::kChain:
      return "chain";
    case PLogPBroadcast::kChainRendezvous:
      return "chain-rendezvous";
    case PLogPBroadcast::kSegmentedChain:
      return "segmented-chain";
    case PLogPBroadcast::kBinary:
      return "binary";
    case PLogPBroadcast::kBinomial:
      return "binomial";
    case PLogPBroadcast::kBinomialRendezvous:
      return "binomial-rendezvous";
    case PLogPBroadcast::kSegmentedBinomial:
      return "segmented-binomial";
  }
  return "?";
}

std::string_view PLogPScatterName(PLogPScatter algorithm) {
  switch (algorithm) {
    case PLogPScatter::kFlat:
      return "flat";
    case PLogPScatter::kChain:
      return "chain";
    case PLogPScatter::kBinomial:
      return "binomial";
  }
  return "?";
}

bool IsSegmented(PLogPBroadcast algorithm) {
  return algorithm == PLogPBroadcast::kSegmentedFlat ||
         algorithm == PLogPBroadcast::kSegmentedChain ||
         algorithm == PLogPBroadcast::kSegmentedBinomial;
}

Result<double> PLogPBroadcastSeconds(const PLogPParams& params, PLogPBroadcast algorithm, int p,
                                     double m_bytes, double segment_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckInputs(params, p, m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckPositive("segment_bytes", segment_bytes));
  const double n = p - 1;
  const double L = params.latency_s;
  const double g_m = params.gap(m_bytes);
  const double g_1 = params.gap(1);
  const double g_s = params.gap(segment_bytes);
  const double k = std::max(1.0, std::ceil(m_bytes / segment_bytes));
  const double floor_log = FloorLog2(p);
  const double ceil_log = CeilLog2(p);
  switch (algorithm) {
    case PLogPBroadcast::kFlat:
      return n * g_m + L;
    case PLogPBroadcast::kFlatRendezvous:
      return n * g_m + 2 * g_1 + 3 * L;
    case PLogPBroadcast::kSegmentedFlat:
      return n * g_s * k + L;
    case PLogPBroadcast::kChain:
      return n * (g_m + L);
    case PLogPBroadcast::kChainRendezvous:
      return n * (g_m + 2 * g_1 + 3 * L);
    case PLogPBroadcast::kSegmentedChain:
      return n * (g_s + L) + g_s * (k - 1);
    case PLogPBroadcast::kBinary:
      return ceil_log * (2 * g_m + L);
    case PLogPBroadcast::kBinomial:
      return floor_log * g_m + ceil_log * L;
    case PLogPBroadcast::kBinomialRendezvous:
      return floor_log * g_m + ceil_log * (2 * g_1 + 3 * L);
    case PLogPBroadcast::kSegmentedBinomial:
      return floor_log * g_s * k + ceil_log * L;
  }
  return Status::InvalidArgument("unknown broadcast algorithm");
}

Result<double> PLogPScatterSeconds(const PLogPParams& params, PLogPScatter algorithm, int p,
                                   double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckInputs(params, p, m_bytes));
  const double L = params.latency_s;
  switch (algorithm) {
    case PLogPScatter::kFlat:
      return (p - 1) * params.gap(m_bytes) + L;
    case PLogPScatter::kChain: {
      // Each node keeps its m and forwards the rest, so the messages along the chain carry
      // (P − 1)·m, (P − 2)·m, …, m, each paying its gap and one latency.
      double sum_s = 0;
      for (int j = 1; j <= p - 1; ++j) sum_s += params.gap(j * m_bytes);
      return sum_s + (p - 1) * L;
    }
    case PLogPScatter::kBinomial: {
      const int rounds = CeilLog2(p);
      double sum_s = 0;
      for (int j = 0; j < rounds; ++j) sum_s += params.gap(std::ldexp(m_bytes, j));
      return sum_s + rounds * L;
    }
  }
  return Status::InvalidArgument("unknown scatter algorithm");
}

std::vector<double> CandidateSegmentBytes(double m_bytes) {
  std::vector<double> sizes;
  for (double s = 1024; s < m_bytes; s *= 2) sizes.push_back(s);
  sizes.push_back(m_bytes);
  return sizes;
}

Result<BroadcastMethod> OptimiseSegment(const PLogPParams& params, PLogPBroadcast algorithm, int p,
                                        double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckPositive("m_bytes", m_bytes));
  const std::vector<double> candidates =
      IsSegmented(algorithm) ? CandidateSegmentBytes(m_bytes) : std::vector<double>{m_bytes};
  BroadcastMethod best{algorithm, 0, 0};
  for (double s : candidates) {
    GRIDCAST_ASSIGN_OR_RETURN(double t, PLogPBroadcastSeconds(params, algorithm, p, m_bytes, s));
    if (best.segment_bytes == 0 || t < best.predicted_s) best = {algorithm, s, t};
  }
  return best;
}

Result<BroadcastMethod> ChooseBroadcastMethod(const PLogPParams& params, int p, double m_bytes) {
  BroadcastMethod best;
  for (int i = 0; i < kNumPLogPBroadcasts; ++i) {
    GRIDCAST_ASSIGN_OR_RETURN(BroadcastMethod method,
                              OptimiseSegment(params, static_cast<PLogPBroadcast>(i), p, m_bytes));
    if (i == 0 || method.predicted_s < best.predicted_s) best = method;
  }
  return best;
}

Result<ScatterMethod> ChooseScatterMethod(const PLogPParams& params, int p, double m_bytes) {
  ScatterMethod best;
  for (int i = 0; i < kNumPLogPScatters; ++i) {
    const auto algorithm = static_cast<PLogPScatter>(i);
    GRIDCAST_ASSIGN_OR_RETURN(double t, PLogPScatterSeconds(params, algorithm, p, m_bytes));
    if (i == 0 || t < best.predicted_s) best = {algorithm, t};
  }
  return best;
}

Result<std::vector<BroadcastDecision>> BroadcastDecisionMap(
    const PLogPParams& params, const std::vector<int>& ps, const std::vector<double>& sizes_bytes) {
  std::vector<BroadcastDecision> map;
  for (int p : ps) {
    for (double m : sizes_bytes) {
      GRIDCAST_ASSIGN_OR_RETURN(BroadcastMethod method, ChooseBroadcastMethod(params, p, m));
      map.push_back({p, m, method});
    }
  }
  return map;
}

}  // namespace gridcast::models
