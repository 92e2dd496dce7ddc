// Costs of the four Allreduce protocols for odd p compared by Rabenseifner & Träff ([PVM04]
// Table 1, algorithms.md 5.3), the regression table itself, and the cost of a generated
// schedule under the same model, so the two can be checked against each other.
//
// Model: one port (send and receive may overlap), a message of m elements costs α + m·β,
// combining two m-vectors costs m·γ. A protocol's time is a·α + b·(mβ) + c·(mγ).
//
// Thread-safety: pure functions on values.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "collectives/reduce/reduce_schedule.h"
#include "include/gridcast/result.h"

namespace gridcast::reduce {

// Do not reorder: the regression table's columns are in this order.
enum class ReduceProtocol {
  // Bruck allgather of whole vectors, then a local reduce:
  // ⌈log p⌉α + (p − 1)mβ + (p − 1)mγ.
  kRingLatency,
  // Butterfly with 3-2/2-1 elimination, whole vectors:
  // (⌈log p⌉ + 1)α + (⌈log p⌉ + 1)mβ + ⌈log p⌉mγ.
  kEliminationLatency,
  // Ring reduce-scatter and allgather of m/p pieces:
  // (⌈log p⌉ + p − 1)α + 2(1 − 1/p)mβ + (1 − 1/p)mγ.
  kRingBandwidth,
  // Elimination with halving, p' = 2^⌊log p⌋:
  // 2⌈log p⌉α + 2(1.5 − 1/p')mβ + (1.5 − 1/p')mγ.
  kEliminationBandwidth,
};
inline constexpr int kNumReduceProtocols = 4;
std::string_view ReduceProtocolName(ReduceProtocol protocol);

// a, b, c of a·α + b·(mβ) + c·(mγ).
struct CostCoefficients {
  double alpha = 0;
  double beta_m = 0;
  double gamma_m = 0;
  bool operator==(const CostCoefficients&) const = default;
};

// The protocol's coefficients for p processes. The paper states them for odd p (the elimination
// protocols need the 2^a factor handled by butterfly steps first); they are evaluated as written
// for any p >= 2. InvalidArgument if p < 2.
Result<CostCoefficients> ReduceProtocolCoefficients(ReduceProtocol protocol, int p);

struct ReduceCostParams {
  double alpha_s = 0;
  double beta_s_per_element = 0;
  double gamma_s_per_element = 0;
};
// a·α + b·m·β + c·m·γ for m elements.
Result<double> ReduceProtocolSeconds(ReduceProtocol protocol, int p, double m_elements,
                                     const ReduceCostParams& params);

// One row of the regression table: times in units of α for one (p, case), in protocol order,
// computed as the paper prints them: each of the three terms rounded by RoundAsTablePrints,
// then their sum rounded the same way. That reproduces cells such as p = 63, case L,
// elimination-bw: 12 + 29.4 + 1.47 = 42.9, where the unrounded sum is 42.84.
// `fastest` marks the smallest printed value (several on a tie).
struct Table1Row {
  int p = 0;
  std::string_view case_name;  // "S", "M", "L" or "XL"
  std::array<double, kNumReduceProtocols> alpha_units{};
  std::array<bool, kNumReduceProtocols> fastest{};
};

// The paper's table: p in {3, 5, 7, 13, 15, 23, 63}; cases S (βm = 0.1α, γm = 0.01α),
// M (1, 0.1), L (10, 1), XL (100, 10), XL only for p = 23 and 63. Where the paper's arithmetic
// disagrees with its formulas (p = 63 elimination-lat, p = 13 M ring-bw) the formula wins.
std::vector<Table1Row> RabenseifnerTraffTable1();

// The table's printing rule: 3 significant digits, but never fewer than the integer digits
// (2425 stays 2425), half away from zero.
double RoundAsTablePrints(double value);

// The cost of a schedule under the model, per round the slowest message and the largest
// reduction: rounds·α + Σ max_sent·β + Σ max_reduced·γ, in elements.
struct ScheduleCost {
  int rounds = 0;
  int64_t sent_elements = 0;
  int64_t reduced_elements = 0;
};
ScheduleCost EvaluateSchedule(const ReduceSchedule& schedule);

}  // namespace gridcast::reduce
