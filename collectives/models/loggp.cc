#include "collectives/models/loggp.h"

#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

Status CheckParams(const LogPParams& params) {
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("latency_s", params.latency_s));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("overhead_s", params.overhead_s));
  return CheckNonNegative("gap_s", params.gap_s);
}

}  // namespace

Result<double> LogPTwoPeerBroadcastSeconds(const LogPParams& params) {
  GRIDCAST_RETURN_IF_ERROR(CheckParams(params));
  const double o = params.overhead_s;
  const double g = params.gap_s;
  return g > o ? g + 2 * o + params.latency_s : 3 * o + params.latency_s;
}

Result<double> LogPBinomialBroadcastSeconds(const LogPParams& params, int p) {
  GRIDCAST_RETURN_IF_ERROR(CheckParams(params));
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  const double hop_s = 2 * params.overhead_s + params.latency_s;
  if (!(params.gap_s < hop_s)) {
    return Status::InvalidArgument("the LogP binomial formula assumes g < 2o + L");
  }
  return CeilLog2(p) * hop_s;
}

Result<double> LogGPBinomialBroadcastSeconds(const LogGPParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckParams(params.logp));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("gap_per_byte_s", params.gap_per_byte_s));
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  if (m_bytes < 1) return Status::InvalidArgument("LogGP needs m_bytes >= 1");
  return CeilLog2(p) * (2 * params.logp.overhead_s + params.logp.latency_s +
                        params.gap_per_byte_s * (m_bytes - 1));
}

}  // namespace gridcast::models
