// Units: parsing and printing of rates ("400mbit"), sizes ("256MiB") and durations ("10ms").
//
// Rates are bits per second in powers of 1000 (kbit, mbit, gbit), as tc writes them.
// Sizes are bytes in powers of 1024 (KiB, MiB, GiB, TiB); a bare number is bytes.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "include/gridcast/result.h"

namespace gridcast {

// ceil(a / b), without the overflow of (a + b - 1) / b: how many chunks of b bytes hold a.
// 0 when b is 0.
constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b + (a % b != 0 ? 1 : 0); }

// "100mbit" -> 1e8. Accepts a non-negative decimal number followed by bit, kbit, mbit or gbit.
Result<double> ParseRateBps(std::string_view text);

// "256MiB" -> 268435456. Accepts an integer or decimal number and an optional B, KiB, MiB,
// GiB or TiB suffix; the result must be a whole number of bytes.
Result<uint64_t> ParseSizeBytes(std::string_view text);

// "10ms" -> 0.01. Accepts s, ms, us (and a bare 0).
Result<double> ParseDurationSeconds(std::string_view text);

// "7d" -> 604800: how long something is kept. Accepts d, h, min, s (and a bare 0).
Result<double> ParseAgeSeconds(std::string_view text);

// 4e8 -> "400mbit", 2.5e9 -> "2.5gbit"; ParseRateBps() reads the output back exactly.
std::string FormatRate(double bps);
// 268435456 -> "256MiB"; non-multiples print as bytes or with two decimals and a unit.
std::string FormatSize(uint64_t bytes);

}  // namespace gridcast
