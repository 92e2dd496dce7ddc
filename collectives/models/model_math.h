// Integer logarithms and argument checks shared by the closed-form cost models.
//
// The papers write "log p" for the number of doubling rounds; the models here use CeilLog2 for
// it unless a formula says floor. Every model returns Result<double> and rejects bad input
// through these checks, so a NaN or a negative size never reaches a planner's decision.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "include/gridcast/status.h"

namespace gridcast::models {

// ⌈log2 n⌉ and ⌊log2 n⌋. REQUIRES: n >= 1.
int CeilLog2(int64_t n);
int FloorLog2(int64_t n);
bool IsPowerOfTwo(int64_t n);

// InvalidArgument "<name> must be >= <min> (got <value>)" unless value >= min.
Status CheckAtLeast(std::string_view name, int64_t value, int64_t min);
// InvalidArgument unless value is finite and >= 0 (resp. > 0).
Status CheckNonNegative(std::string_view name, double value);
Status CheckPositive(std::string_view name, double value);

}  // namespace gridcast::models
