// The pure parts of `gridcast tomography`'s command line: how many runs, which member is the
// source of each run, and where the inferred topology is cached for `gridcast send --algo auto`.
// Pure; thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast::cli {

// --runs: a fixed count, or `auto` (stop once the partition is stable, at most max_runs).
struct RunCount {
  bool automatic = false;
  int runs = 0;  // the fixed count, or the cap for auto
};

inline constexpr int kMaxTomographyRuns = 100;

// "auto" or an integer 1..kMaxTomographyRuns; `max_runs` (the cap for auto) must lie in
// stable_last_n..kMaxTomographyRuns, since auto needs stable_last_n runs to decide anything.
// Errors: InvalidArgument naming the option, e.g. "--runs: expected a count or auto, not 'x'".
Result<RunCount> ParseRunCount(std::string_view runs, int max_runs, int stable_last_n);

// --sources: "rotate" or one member's name. Rotation visits every member once per
// members.size() runs, stepping through the cluster file's order by a stride coprime with the
// member count near count / golden ratio: cluster files list a site's nodes together, so
// consecutive runs start in different parts of the network (16 members: 0, 9, 2, 11, ...).
// Errors: InvalidArgument for an unknown member or no members.
Result<std::vector<std::string>> SourcesOfRuns(std::string_view sources, const std::vector<std::string>& members,
                                               int runs);

// Where `gridcast tomography` caches its latest inferred topology for the cluster file
// `cluster_file`: <its directory>/.gridcast-tomography/topology.yaml.
std::filesystem::path TomographyCachePath(const std::filesystem::path& cluster_file);

// "45 s", "12 min", "3.5 h", "2.0 days": the age of a cached topology, for the send summary.
std::string FormatAge(double seconds);

}  // namespace gridcast::cli
