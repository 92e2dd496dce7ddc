// Shared by the integration tests: a scrape of gridcastd --metrics, parsed.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"

namespace gridcast {

// One scrape: series (name and sorted labels) to value.
class Exposition {
 public:
  explicit Exposition(const std::string& text) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t space = line.rfind(' ');
      if (space == std::string::npos) continue;
      std::string series = line.substr(0, space);
      const size_t brace = series.find('{');
      std::map<std::string, std::string> labels;
      std::string name = series.substr(0, brace);
      if (brace != std::string::npos) {
        // k="v",k="v" (our values hold no quotes)
        std::string rest = series.substr(brace + 1, series.size() - brace - 2);
        size_t at = 0;
        while (at < rest.size()) {
          const size_t eq = rest.find('=', at);
          const size_t close = rest.find('"', eq + 2);
          labels[rest.substr(at, eq - at)] = rest.substr(eq + 2, close - eq - 2);
          at = close + 2;
        }
      }
      values_[{name, labels}] = std::stod(line.substr(space + 1));
    }
  }

  std::optional<double> Value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    auto it = values_.find({name, labels});
    return it == values_.end() ? std::nullopt : std::optional<double>(it->second);
  }
  // The sum over every series of `name` whose labels include `match`.
  double Sum(const std::string& name, const std::map<std::string, std::string>& match = {}) const {
    double sum = 0;
    for (const auto& [key, value] : values_) {
      if (key.first != name) continue;
      bool matches = true;
      for (const auto& [k, v] : match) matches = matches && key.second.count(k) && key.second.at(k) == v;
      if (matches) sum += value;
    }
    return sum;
  }

 private:
  std::map<std::pair<std::string, std::map<std::string, std::string>>, double> values_;
};

inline std::string Scrape(const LocalCluster& cluster, int i) {
  Result<CommandOutput> out = RunCommand({"curl", "-sSf", "http://" + cluster.metrics_address(i) + "/metrics"});
  EXPECT_TRUE(out.ok() && out->exit_code == 0) << (out.ok() ? out->output : out.status().message());
  return out.ok() ? out->output : "";
}

}  // namespace gridcast
