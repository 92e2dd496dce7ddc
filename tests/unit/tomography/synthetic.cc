#include "tests/unit/tomography/synthetic.h"

#include <algorithm>
#include <cmath>

namespace gridcast::testing {

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

DenseMatrix PlantedMatrix(const std::vector<std::vector<int>>& paths,
                          const std::vector<double>& level_weight, double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int n = static_cast<int>(paths.size());
  DenseMatrix w(n);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      size_t common = 0;
      while (common < paths[i].size() && paths[i][common] == paths[j][common]) ++common;
      const double v = level_weight[common] * (1 - noise + 2 * noise * Uniform(rng));
      w.at(i, j) = w.at(j, i) = v;
    }
  }
  return w;
}

std::vector<std::vector<int>> FlatPaths(const std::vector<int>& sizes) {
  std::vector<std::vector<int>> paths;
  for (size_t c = 0; c < sizes.size(); ++c) {
    for (int i = 0; i < sizes[c]; ++i) paths.push_back({static_cast<int>(c)});
  }
  return paths;
}

// Stays whole: one measurement broadcast simulated bin by bin, in the order its events happen.
Observations SyntheticRun(const SyntheticNetwork& net, const std::string& source, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int bins = static_cast<int>(std::lround((net.active_s + 2 * net.ramp_s) / net.bin_s));
  const int ramp_bins = static_cast<int>(std::lround(net.ramp_s / net.bin_s));
  auto level = [&](int k) { return k < ramp_bins || k >= bins - ramp_bins ? 0.25 : 1.0; };
  // A shaped link is never exceeded: TCP's losses and the bins' timing only take away.
  auto noisy = [&] { return 1 - net.noise * Uniform(rng); };

  Observations obs;
  obs.source = source;
  obs.piece_bytes = 256 * 1024;
  obs.bin_s = net.bin_s;
  std::vector<std::string> names;
  std::vector<int> cluster_of;
  for (size_t c = 0; c < net.clusters.size(); ++c) {
    for (const std::string& name : net.clusters[c]) {
      names.push_back(name);
      cluster_of.push_back(static_cast<int>(c));
    }
  }
  const int n = static_cast<int>(names.size());
  std::vector<std::vector<std::vector<double>>> bytes(  // [from][to][bin]
      n, std::vector<std::vector<double>>(n, std::vector<double>(bins, 0.0)));
  for (int k = 0; k < bins; ++k) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j && cluster_of[i] == cluster_of[j]) {
          bytes[i][j][k] = net.pair_bps / 8 * net.bin_s * level(k) * noisy();
        }
      }
    }
    for (size_t a = 0; a < net.clusters.size(); ++a) {
      for (size_t b = 0; b < net.clusters.size(); ++b) {
        if (a == b || net.cross_bps[a][b] <= 0) continue;
        // The aggregate is what the link carries; how it divides among pairs is random.
        std::vector<std::pair<int, int>> pairs;
        std::vector<double> share;
        for (int i = 0; i < n; ++i) {
          for (int j = 0; j < n; ++j) {
            if (cluster_of[i] == static_cast<int>(a) && cluster_of[j] == static_cast<int>(b) &&
                names[j] != source) {
              pairs.emplace_back(i, j);
              share.push_back(Uniform(rng) + 0.01);
            }
          }
        }
        double total_share = 0;
        for (double s : share) total_share += s;
        const double total = net.cross_bps[a][b] / 8 * net.bin_s * level(k) * noisy();
        for (size_t p = 0; p < pairs.size(); ++p) {
          bytes[pairs[p].first][pairs[p].second][k] += total * share[p] / total_share;
        }
      }
    }
  }
  std::vector<uint64_t> received(n, 0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j || names[j] == source) continue;
      PairObservation p;
      p.from = names[i];
      p.to = names[j];
      int first = -1, last = -1;
      for (int k = 0; k < bins; ++k) {
        const uint64_t b = static_cast<uint64_t>(std::llround(bytes[i][j][k]));
        p.bytes_per_bin.push_back(b);
        p.bytes += b;
        if (b > 0) {
          if (first < 0) first = k;
          last = k;
        }
      }
      if (p.bytes == 0) continue;
      p.blocks = (p.bytes + kObservationBlockBytes - 1) / kObservationBlockBytes;
      p.first_s = first * net.bin_s;
      p.last_s = (last + 1) * net.bin_s;
      received[j] += p.bytes;
      obs.pairs.push_back(std::move(p));
    }
  }
  for (int i = 0; i < n; ++i) {
    obs.members.push_back({.name = names[i],
                           .start_s = 0,
                           .finish_s = bins * net.bin_s,
                           .bytes_received = received[i],
                           .complete = names[i] != source});
  }
  obs.payload_bytes = std::max<uint64_t>(1, *std::max_element(received.begin(), received.end()));
  return obs;
}

SyntheticNetwork TwoSites() {
  SyntheticNetwork net;
  net.clusters.resize(2);
  for (int i = 0; i < 8; ++i) {
    net.clusters[0].push_back("a-" + std::to_string(i));
    net.clusters[1].push_back("b-" + std::to_string(i));
  }
  net.cross_bps = {{0, 50e6}, {5e6, 0}};
  return net;
}

}  // namespace gridcast::testing
