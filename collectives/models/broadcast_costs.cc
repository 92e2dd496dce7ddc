#include "collectives/models/broadcast_costs.h"

#include <algorithm>

#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

// The terms every formula is written in, after the inputs are checked.
struct Terms {
  int p;
  double log_p;       // ⌈log2 p⌉
  double l;           // LAN latency
  double wan;         // L
  double transfer_s;  // M/b
};

Result<Terms> Check(const MlParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("lan_latency_s", params.lan_latency_s));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("wan_latency_s", params.wan_latency_s));
  GRIDCAST_RETURN_IF_ERROR(CheckPositive("node_bandwidth_Bps", params.node_bandwidth_Bps));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  return Terms{p, static_cast<double>(CeilLog2(p)), params.lan_latency_s, params.wan_latency_s,
               m_bytes / params.node_bandwidth_Bps};
}

// Applies a single-site formula, which is only meaningful when someone receives.
template <typename Formula>
Result<double> SingleSite(const MlParams& params, int p, double m_bytes, Formula formula) {
  GRIDCAST_ASSIGN_OR_RETURN(Terms t, Check(params, p, m_bytes));
  if (t.p == 1) return 0.0;
  return formula(t);
}

// ⌈log_k p⌉ by repeated multiplication (exact, unlike a floating-point logarithm).
int CeilLogBase(int64_t p, int64_t k) {
  int rounds = 0;
  for (int64_t reached = 1; reached < p; reached *= k) ++rounds;
  return rounds;
}

}  // namespace

Result<double> FlatBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return t.l + (t.p - 1) * t.transfer_s; });
}

Result<double> ChainBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return (t.p - 1) * t.l + t.transfer_s; });
}

Result<double> UnpipelinedChainBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return (t.p - 1) * (t.l + t.transfer_s); });
}

Result<double> BinaryBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return t.log_p * t.l + 2 * t.transfer_s; });
}

Result<double> UnpipelinedBinaryBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return t.log_p * (t.l + 2 * t.transfer_s); });
}

Result<double> BinomialBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return t.log_p * (t.l + t.transfer_s); });
}

Result<double> KnomialBroadcastSeconds(const MlParams& params, int p, int k, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("k", k, 2));
  return SingleSite(params, p, m_bytes, [k](const Terms& t) {
    return CeilLogBase(t.p, k) * (t.l + (k - 1) * t.transfer_s);
  });
}

Result<double> ScatterAllgatherBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes, [](const Terms& t) {
    return 2 * t.log_p * t.l + 2.0 * (t.p - 1) / t.p * t.transfer_s;
  });
}

Result<double> VanDeGeijnAsPrintedSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes, [](const Terms& t) {
    return 2 * t.log_p * t.l + 2.0 * t.p / (t.p - 1) * t.transfer_s;
  });
}

Result<double> ScatterRingAllgatherBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes, [](const Terms& t) {
    return (t.log_p + t.p - 1) * t.l + 2.0 * (t.p - 1) / t.p * t.transfer_s;
  });
}

Result<double> MultilaneBroadcastSeconds(const MlParams& params, int p, double m_bytes) {
  return SingleSite(params, p, m_bytes,
                    [](const Terms& t) { return t.log_p * t.l + t.transfer_s; });
}

Result<double> TwoSiteChainSeconds(const MlParams& params, int p_per_site, double m_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(Terms t, Check(params, p_per_site, m_bytes));
  return (2 * t.p - 2) * t.l + t.wan + t.transfer_s;
}

Result<double> TwoSiteChainAsPrintedSeconds(const MlParams& params, int p_per_site,
                                            double m_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(Terms t, Check(params, p_per_site, m_bytes));
  return (t.p - 1) * t.l + t.wan + t.transfer_s;
}

Result<double> TwoSiteBinarySeconds(const MlParams& params, int p_per_site, double m_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(Terms t, Check(params, p_per_site, m_bytes));
  return t.log_p * t.l + t.wan + 3 * t.transfer_s;
}

Result<double> TwoSiteBinomialSeconds(const MlParams& params, int p_per_site, double m_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(Terms t, Check(params, p_per_site, m_bytes));
  return t.wan + t.transfer_s + t.log_p * (t.l + t.transfer_s);
}

Result<double> TwoSiteMultilaneSeconds(const MlParams& params, int p_per_site, double m_bytes) {
  GRIDCAST_ASSIGN_OR_RETURN(Terms t, Check(params, p_per_site, m_bytes));
  return std::max(0.0, 2 * t.log_p - 2) * t.l + t.wan + t.transfer_s;
}

}  // namespace gridcast::models
