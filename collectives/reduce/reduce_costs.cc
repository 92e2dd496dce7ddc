#include "collectives/reduce/reduce_costs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "collectives/models/model_math.h"

namespace gridcast::reduce {

std::string_view ReduceProtocolName(ReduceProtocol protocol) {
  switch (protocol) {
    case ReduceProtocol::kRingLatency:
      return "ring-lat";
    case ReduceProtocol::kEliminationLatency:
      return "elim-lat";
    case ReduceProtocol::kRingBandwidth:
      return "ring-bw";
    case ReduceProtocol::kEliminationBandwidth:
      return "elim-bw";
  }
  return "?";
}

Result<CostCoefficients> ReduceProtocolCoefficients(ReduceProtocol protocol, int p) {
  GRIDCAST_RETURN_IF_ERROR(models::CheckAtLeast("p", p, 2));
  const double log_p = models::CeilLog2(p);
  const double shrink = 1 - 1.0 / p;                                               // 1 − 1/p
  const double elim = 1.5 - 1.0 / static_cast<double>(1 << models::FloorLog2(p));  // 1.5 − 1/p'
  switch (protocol) {
    case ReduceProtocol::kRingLatency:
      return CostCoefficients{log_p, p - 1.0, p - 1.0};
    case ReduceProtocol::kEliminationLatency:
      return CostCoefficients{log_p + 1, log_p + 1, log_p};
    case ReduceProtocol::kRingBandwidth:
      return CostCoefficients{log_p + p - 1, 2 * shrink, shrink};
    case ReduceProtocol::kEliminationBandwidth:
      return CostCoefficients{2 * log_p, 2 * elim, elim};
  }
  return Status::InvalidArgument("unknown reduce protocol");
}

Result<double> ReduceProtocolSeconds(ReduceProtocol protocol, int p, double m_elements,
                                     const ReduceCostParams& params) {
  GRIDCAST_RETURN_IF_ERROR(models::CheckNonNegative("m_elements", m_elements));
  GRIDCAST_RETURN_IF_ERROR(models::CheckNonNegative("alpha_s", params.alpha_s));
  GRIDCAST_RETURN_IF_ERROR(
      models::CheckNonNegative("beta_s_per_element", params.beta_s_per_element));
  GRIDCAST_RETURN_IF_ERROR(
      models::CheckNonNegative("gamma_s_per_element", params.gamma_s_per_element));
  GRIDCAST_ASSIGN_OR_RETURN(CostCoefficients c, ReduceProtocolCoefficients(protocol, p));
  return c.alpha * params.alpha_s + c.beta_m * m_elements * params.beta_s_per_element +
         c.gamma_m * m_elements * params.gamma_s_per_element;
}

double RoundAsTablePrints(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const double scale = std::pow(10.0, std::max(0, 2 - exponent));
  // The relative nudge keeps exact decimal halves (8.625) rounding up despite binary error.
  const double scaled = std::fabs(value) * scale * (1 + 1e-12);
  return std::copysign(std::floor(scaled + 0.5) / scale, value);
}

std::vector<Table1Row> RabenseifnerTraffTable1() {
  struct Case {
    std::string_view name;
    double beta_m;   // βm / α
    double gamma_m;  // γm / α
  };
  static constexpr Case kCases[] = {{"S", 0.1, 0.01}, {"M", 1, 0.1}, {"L", 10, 1}, {"XL", 100, 10}};
  struct PaperRow {
    int p;
    int cases;  // how many of kCases the paper lists
  };
  static constexpr PaperRow kRows[] = {{3, 3}, {5, 3}, {7, 3}, {13, 3}, {15, 3}, {23, 4}, {63, 4}};
  std::vector<Table1Row> table;
  for (const PaperRow& paper_row : kRows) {
    for (int c = 0; c < paper_row.cases; ++c) {
      Table1Row row;
      row.p = paper_row.p;
      row.case_name = kCases[c].name;
      for (int i = 0; i < kNumReduceProtocols; ++i) {
        // p >= 3 in the table, so the coefficients always exist.
        const CostCoefficients k =
            *ReduceProtocolCoefficients(static_cast<ReduceProtocol>(i), paper_row.p);
        const double sum = RoundAsTablePrints(k.alpha) +
                           RoundAsTablePrints(k.beta_m * kCases[c].beta_m) +
                           RoundAsTablePrints(k.gamma_m * kCases[c].gamma_m);
        row.alpha_units[i] = RoundAsTablePrints(sum);
      }
      const double best = *std::min_element(row.alpha_units.begin(), row.alpha_units.end());
      for (int i = 0; i < kNumReduceProtocols; ++i) row.fastest[i] = row.alpha_units[i] == best;
      table.push_back(row);
    }
  }
  return table;
}

ScheduleCost EvaluateSchedule(const ReduceSchedule& schedule) {
  ScheduleCost cost;
  for (const ReduceRound& round : schedule.rounds) {
    int64_t sent = 0;
    int64_t reduced = 0;
    for (const ProcessStep& step : round.steps) {
      if (step.send) sent = std::max(sent, step.send->range.size());
      if (step.receive && step.receive->merge != Merge::kStore) {
        reduced = std::max(reduced, step.receive->range.size());
      }
    }
    ++cost.rounds;
    cost.sent_elements += sent;
    cost.reduced_elements += reduced;
  }
  return cost;
}

}  // namespace gridcast::reduce
