// Synthetic inputs for the tomography tests: planted similarity matrices and broadcasts whose
// per-pair byte counts come from known rates, all from seeded std::mt19937_64 (specified, so
// every platform draws the same numbers).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tomography/dense_matrix.h"
#include "tomography/observations.h"

namespace gridcast::testing {

// Uniform in [0, 1) from the generator's bits (std::uniform_real_distribution is not
// specified bit for bit).
double Uniform(std::mt19937_64& rng);

// Node i has the group path paths[i] (e.g. {site, rack}); a pair's weight is
// level_weight[d] where d is the length of the paths' common prefix, times a factor uniform
// in [1 - noise, 1 + noise].
DenseMatrix PlantedMatrix(const std::vector<std::vector<int>>& paths,
                          const std::vector<double>& level_weight, double noise, uint64_t seed);
// Paths for flat clusters of the given sizes: {0}, {0}, ..., {1}, ...
std::vector<std::vector<int>> FlatPaths(const std::vector<int>& sizes);

struct SyntheticNetwork {
  std::vector<std::vector<std::string>> clusters;
  double pair_bps = 10e6;                      // each ordered pair inside a cluster
  std::vector<std::vector<double>> cross_bps;  // [a][b]: all of cluster a to all of cluster b
  double active_s = 10;                        // flows at full rate for this long...
  double ramp_s = 1;                           // ...after and before this long at a quarter
  double noise = 0.2;                          // per bin, uniform in [1 - noise, 1]
  double bin_s = 0.25;
};

// One broadcast from `source` (which receives nothing) over `net`.
Observations SyntheticRun(const SyntheticNetwork& net, const std::string& source, uint64_t seed);

// Two clusters of 8 ("a-0".., "b-0"..), pairs at 10 Mbit/s inside, a->b 50 Mbit/s (the
// bottleneck uplink, saturated), b->a 5 Mbit/s.
SyntheticNetwork TwoSites();

}  // namespace gridcast::testing
