#include "client/cli/tomography_args.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

namespace gridcast::cli {
namespace {

constexpr double kInverseGoldenRatio = 0.6180339887498949;

}  // namespace

Result<RunCount> ParseRunCount(std::string_view runs, int max_runs, int stable_last_n) {
  if (runs == "auto") {
    if (max_runs < stable_last_n || max_runs > kMaxTomographyRuns) {
      return Status::InvalidArgument(fmt::format("--max-runs: expected {} to {} (auto compares the last {} runs), not {}",
                                                 stable_last_n, kMaxTomographyRuns, stable_last_n, max_runs));
    }
    return RunCount{true, max_runs};
  }
  int count = 0;
  const auto [end, error] = std::from_chars(runs.data(), runs.data() + runs.size(), count);
  if (runs.empty() || error != std::errc() || end != runs.data() + runs.size()) {
    return Status::InvalidArgument("--runs: expected a count or auto, not '" + std::string(runs) + "'");
  }
  if (count < 1 || count > kMaxTomographyRuns) {
    return Status::InvalidArgument(fmt::format("--runs: expected 1 to {}, not {}", kMaxTomographyRuns, count));
  }
  return RunCount{false, count};
}

Result<std::vector<std::string>> SourcesOfRuns(std::string_view sources, const std::vector<std::string>& members,
                                               int runs) {
  if (members.empty()) return Status::InvalidArgument("the cluster has no members");
  std::vector<std::string> out;
  if (sources == "rotate") {
    const size_t n = members.size();
    size_t stride = std::max<size_t>(1, static_cast<size_t>(std::lround(static_cast<double>(n) * kInverseGoldenRatio)));
    while (std::gcd(stride, n) != 1) --stride;  // ends at 1 at the latest
    for (int k = 0; k < runs; ++k) out.push_back(members[(static_cast<size_t>(k) * stride) % n]);
    return out;
  }
  if (std::find(members.begin(), members.end(), sources) == members.end()) {
    return Status::InvalidArgument("--sources: expected rotate or a member of the cluster, not '" +
                                   std::string(sources) + "'");
  }
  return std::vector<std::string>(static_cast<size_t>(runs), std::string(sources));
}

std::filesystem::path TomographyCachePath(const std::filesystem::path& cluster_file) {
  return std::filesystem::absolute(cluster_file).parent_path() / ".gridcast-tomography" / "topology.yaml";
}

std::string FormatAge(double seconds) {
  seconds = std::max(seconds, 0.0);
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 48 * 3600) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

}  // namespace gridcast::cli
