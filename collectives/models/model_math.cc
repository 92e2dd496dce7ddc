#include "collectives/models/model_math.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <string>

namespace gridcast::models {

int CeilLog2(int64_t n) {
  assert(n >= 1);
  return static_cast<int>(std::bit_width(static_cast<uint64_t>(n - 1)));
}

int FloorLog2(int64_t n) {
  assert(n >= 1);
  return static_cast<int>(std::bit_width(static_cast<uint64_t>(n))) - 1;
}

bool IsPowerOfTwo(int64_t n) { return n >= 1 && std::has_single_bit(static_cast<uint64_t>(n)); }

Status CheckAtLeast(std::string_view name, int64_t value, int64_t min) {
  if (value >= min) return Status::Ok();
  return Status::InvalidArgument(std::string(name) + " must be >= " + std::to_string(min) +
                                 " (got " + std::to_string(value) + ")");
}

Status CheckNonNegative(std::string_view name, double value) {
  if (std::isfinite(value) && value >= 0) return Status::Ok();
  return Status::InvalidArgument(std::string(name) + " must be finite and >= 0 (got " +
                                 std::to_string(value) + ")");
}

Status CheckPositive(std::string_view name, double value) {
  if (std::isfinite(value) && value > 0) return Status::Ok();
  return Status::InvalidArgument(std::string(name) + " must be finite and > 0 (got " +
                                 std::to_string(value) + ")");
}

}  // namespace gridcast::models
