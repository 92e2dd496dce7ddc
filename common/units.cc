#include "common/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

namespace gridcast {
namespace {

struct NumberAndSuffix {
  double number;
  std::string_view suffix;
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "12.5mbit" into 12.5 and "mbit" (the suffix may be separated by spaces).
Result<NumberAndSuffix> SplitNumber(std::string_view text, std::string_view what) {
  std::string_view s = Trim(text);
  size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) {
    ++end;
  }
  if (end == 0) {
    return Status::InvalidArgument("bad " + std::string(what) + " '" + std::string(text) +
                                   "': expected a number first");
  }
  double number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + end, number);
  if (ec != std::errc() || ptr != s.data() + end || !std::isfinite(number)) {
    return Status::InvalidArgument("bad " + std::string(what) + " '" + std::string(text) + "'");
  }
  return NumberAndSuffix{number, Trim(s.substr(end))};
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string FormatScaled(double value, const char* unit) {
  // Nine significant digits: enough for a parse of the output to give the value back.
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g%s", value, unit);
  return buffer;
}

}  // namespace

Result<double> ParseRateBps(std::string_view text) {
  GRIDCAST_ASSIGN_OR_RETURN(NumberAndSuffix parsed, SplitNumber(text, "rate"));
  static constexpr struct { std::string_view unit; double scale; } kUnits[] = {
      {"bit", 1.0}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}};
  for (const auto& u : kUnits) {
    if (EqualsIgnoreCase(parsed.suffix, u.unit)) {
      double bps = parsed.number * u.scale;
      if (bps <= 0) {
        return Status::InvalidArgument("bad rate '" + std::string(text) +
                                       "': must be positive (omit the field for unshaped)");
      }
      return bps;
    }
  }
  return Status::InvalidArgument("bad rate unit in '" + std::string(text) +
                                 "': use kbit, mbit or gbit (bits per second, powers of 1000)");
}

Result<uint64_t> ParseSizeBytes(std::string_view text) {
  GRIDCAST_ASSIGN_OR_RETURN(NumberAndSuffix parsed, SplitNumber(text, "size"));
  static constexpr struct { std::string_view unit; double scale; } kUnits[] = {
      {"", 1.0},
      {"B", 1.0},
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"TiB", 1024.0 * 1024 * 1024 * 1024}};
  for (const auto& u : kUnits) {
    if (EqualsIgnoreCase(parsed.suffix, u.unit)) {
      double bytes = parsed.number * u.scale;
      if (bytes != std::floor(bytes)) {
        return Status::InvalidArgument("bad size '" + std::string(text) +
                                       "': not a whole number of bytes");
      }
      if (bytes >= 18446744073709551616.0) {
        return Status::InvalidArgument("bad size '" + std::string(text) + "': too large");
      }
      return static_cast<uint64_t>(bytes);
    }
  }
  return Status::InvalidArgument("bad size unit in '" + std::string(text) +
                                 "': use B, KiB, MiB, GiB or TiB");
}

namespace {

struct TimeUnit {
  std::string_view unit;
  double seconds;
};

Result<double> ParseSeconds(std::string_view text, std::span<const TimeUnit> units, const char* names) {
  GRIDCAST_ASSIGN_OR_RETURN(NumberAndSuffix parsed, SplitNumber(text, "duration"));
  if (parsed.suffix.empty() && parsed.number == 0) return 0.0;
  for (const TimeUnit& u : units) {
    if (EqualsIgnoreCase(parsed.suffix, u.unit)) return parsed.number * u.seconds;
  }
  return Status::InvalidArgument("bad duration unit in '" + std::string(text) + "': use " + names);
}

}  // namespace

Result<double> ParseDurationSeconds(std::string_view text) {
  static constexpr TimeUnit kUnits[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}};
  return ParseSeconds(text, kUnits, "s, ms or us");
}

Result<double> ParseAgeSeconds(std::string_view text) {
  static constexpr TimeUnit kUnits[] = {{"d", 86400.0}, {"h", 3600.0}, {"min", 60.0}, {"s", 1.0}};
  return ParseSeconds(text, kUnits, "d, h, min or s");
}

std::string FormatRate(double bps) {
  if (!std::isfinite(bps)) return "unshaped";
  if (bps >= 1e9) return FormatScaled(bps / 1e9, "gbit");
  if (bps >= 1e6) return FormatScaled(bps / 1e6, "mbit");
  if (bps >= 1e3) return FormatScaled(bps / 1e3, "kbit");
  return FormatScaled(bps, "bit");
}

std::string FormatSize(uint64_t bytes) {
  static constexpr struct { const char* unit; uint64_t scale; } kUnits[] = {
      {"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}};
  for (const auto& u : kUnits) {
    if (bytes >= u.scale) {
      if (bytes % u.scale == 0) return std::to_string(bytes / u.scale) + u.unit;
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.2f%s",
                    static_cast<double>(bytes) / static_cast<double>(u.scale), u.unit);
      return buffer;
    }
  }
  return std::to_string(bytes) + "B";
}

}  // namespace gridcast
