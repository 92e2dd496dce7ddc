#include "collectives/models/alltoall_costs.h"

#include <cmath>
#include <string>

#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

Status Check(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("alpha_s", params.alpha_s));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("beta_s_per_byte", params.beta_s_per_byte));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("beta_em_s_per_byte", params.beta_em_s_per_byte));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("gamma_s_per_byte", params.gamma_s_per_byte));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("delta_s_per_byte", params.delta_s_per_byte));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("contention_s_per_byte", params.contention_s_per_byte));
  return CheckNonNegative("latency_s", params.latency_s);
}

Status CheckPowerOfTwo(std::string_view what, int64_t value) {
  if (IsPowerOfTwo(value)) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + " must be a power of two (got " +
                                 std::to_string(value) + ")");
}

Status CheckMultipleOf(int p, int k) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("k", k, 1));
  if (p % k == 0) return Status::Ok();
  return Status::InvalidArgument("p = " + std::to_string(p) +
                                 " must be a multiple of k = " + std::to_string(k));
}

// ⌈√p⌉, exactly.
int CeilSqrt(int p) {
  int side = static_cast<int>(std::sqrt(static_cast<double>(p)));
  while (side * side < p) ++side;
  while (side > 1 && (side - 1) * (side - 1) >= p) --side;
  return side;
}

// Eqs. 9 and 10 share their form: each message is copied into the NIC once per k sends.
double KStrategySeconds(const A2AParams& a, int p, int k, double m) {
  return (p - 1) * (a.alpha_s + m * a.beta_em_s_per_byte) +
         static_cast<double>(p) / k * m * a.delta_s_per_byte + a.latency_s;
}

}  // namespace

A2AParams LemieuxA2AParams() {
  A2AParams params;
  params.alpha_s = 7.4e-6;
  params.beta_s_per_byte = 7.5e-9;
  params.beta_em_s_per_byte = 3.13e-9;
  params.delta_s_per_byte = 3.13e-9;
  return params;
}

Result<double> A2AEffectiveBandwidthBps(int p, double m_bytes, double seconds) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckPositive("seconds", seconds));
  return 2.0 * (p - 1) * m_bytes / seconds;
}

Result<double> A2ADirectSeconds(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  return (p - 1) * params.alpha_s +
         (p - 1) * m_bytes * (params.beta_s_per_byte + params.contention_s_per_byte) +
         params.latency_s;
}

Result<double> A2AMeshSeconds(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  const int side = CeilSqrt(p);
  return 2 * side * params.alpha_s +
         p * m_bytes *
             (params.beta_em_s_per_byte + params.gamma_s_per_byte + params.contention_s_per_byte) +
         side * m_bytes * params.delta_s_per_byte + params.latency_s;
}

Result<double> A2AHypercubeSeconds(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckPowerOfTwo("p", p));
  return FloorLog2(p) * params.alpha_s +
         (p - 1) * m_bytes *
             (params.beta_s_per_byte + params.gamma_s_per_byte + params.contention_s_per_byte);
}

Result<double> A2AHypercubeExtraNodesSeconds(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  const int extra = IsPowerOfTwo(p) ? 0 : 1;
  return (FloorLog2(p) + extra) * params.alpha_s +
         (1 + extra) * (p - 1) * m_bytes * (params.beta_s_per_byte + params.contention_s_per_byte);
}

Result<double> A2AHybridSeconds(const A2AParams& params, int p, int zeta, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckPowerOfTwo("p", p));
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("zeta", zeta, 0));
  if (zeta > FloorLog2(p)) {
    return Status::InvalidArgument("zeta must be <= log2 p = " + std::to_string(FloorLog2(p)));
  }
  const double p_prime = static_cast<double>(p >> zeta);
  return FloorLog2(p) * params.alpha_s +
         p_prime * m_bytes *
             (params.beta_s_per_byte + params.gamma_s_per_byte + params.delta_s_per_byte) +
         (p - p_prime) * m_bytes * params.beta_em_s_per_byte;
}

Result<double> A2ARingSeconds(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  return (p - 1) * (params.alpha_s + m_bytes * params.beta_s_per_byte) + params.latency_s;
}

Result<double> A2APrefixSendSeconds(const A2AParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckPowerOfTwo("p", p));
  return (p - 1) * (params.alpha_s + m_bytes * params.beta_em_s_per_byte) +
         m_bytes * params.delta_s_per_byte + params.latency_s;
}

Result<double> A2AKPrefixSeconds(const A2AParams& params, int p, int k, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckMultipleOf(p, k));
  GRIDCAST_RETURN_IF_ERROR(CheckPowerOfTwo("k", k));
  return KStrategySeconds(params, p, k, m_bytes);
}

Result<double> A2AKShiftSeconds(const A2AParams& params, int p, int k, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(Check(params, p, m_bytes));
  GRIDCAST_RETURN_IF_ERROR(CheckMultipleOf(p, k));
  return KStrategySeconds(params, p, k, m_bytes);
}

}  // namespace gridcast::models
