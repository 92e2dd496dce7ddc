#include "collectives/models/hockney.h"

#include <string>

#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

Status CheckParams(const HockneyParams& params) {
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("alpha_s", params.alpha_s));
  return CheckNonNegative("beta_s_per_byte", params.beta_s_per_byte);
}

}  // namespace

Result<double> HockneyPointToPointSeconds(const HockneyParams& params, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckParams(params));
  GRIDCAST_RETURN_IF_ERROR(CheckNonNegative("m_bytes", m_bytes));
  return params.alpha_s + params.beta_s_per_byte * m_bytes;
}

Result<double> HockneyBinomialBroadcastSeconds(const HockneyParams& params, int p, double m_bytes) {
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("p", p, 1));
  GRIDCAST_ASSIGN_OR_RETURN(double hop_s, HockneyPointToPointSeconds(params, m_bytes));
  return CeilLog2(p) * hop_s;
}

Result<double> HockneyLinkSeconds(const HockneyLinkMatrix& matrix, int from, int to,
                                  double m_bytes) {
  const int p = matrix.processes;
  GRIDCAST_RETURN_IF_ERROR(CheckAtLeast("processes", p, 1));
  if (matrix.links.size() != static_cast<size_t>(p) * static_cast<size_t>(p)) {
    return Status::InvalidArgument("link matrix needs " + std::to_string(p) + "x" +
                                   std::to_string(p) + " entries (got " +
                                   std::to_string(matrix.links.size()) + ")");
  }
  if (from < 0 || from >= p || to < 0 || to >= p || from == to) {
    return Status::InvalidArgument("no link " + std::to_string(from) + " -> " + std::to_string(to) +
                                   " among " + std::to_string(p) + " processes");
  }
  return HockneyPointToPointSeconds(matrix.links[static_cast<size_t>(from) * p + to], m_bytes);
}

}  // namespace gridcast::models
