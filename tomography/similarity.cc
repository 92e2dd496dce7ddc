#include "tomography/similarity.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace gridcast {
namespace {

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g%%", 100 * fraction);
  return buffer;
}

Result<std::vector<std::string>> NodeOrder(const std::vector<Observations>& runs,
                                           const std::vector<std::string>& order) {
  std::set<std::string> members;
  for (const Observations& run : runs) {
    for (const MemberObservation& m : run.members) members.insert(m.name);
  }
  if (order.empty()) return std::vector<std::string>(members.begin(), members.end());
  std::set<std::string> given;
  for (const std::string& name : order) {
    if (!given.insert(name).second) {
      return Status::InvalidArgument("order: duplicate name '" + name + "'");
    }
  }
  for (const std::string& name : members) {
    if (!given.count(name)) return Status::InvalidArgument("order: misses member '" + name + "'");
  }
  return order;
}

}  // namespace

std::vector<int> Similarity::UsableNodes() const {
  std::set<std::string> flagged_names;
  for (const FlaggedNode& f : flagged) flagged_names.insert(f.name);
  std::vector<int> usable;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    if (!flagged_names.count(names[i])) usable.push_back(i);
  }
  return usable;
}

Result<Similarity> AggregateRuns(const std::vector<Observations>& runs,
                                 const SimilarityOptions& options) {
  if (!(options.min_weight_fraction >= 0)) {
    return Status::InvalidArgument("min_weight_fraction: must be >= 0");
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    Status valid = ValidateObservations(runs[r]);
    if (!valid.ok())
      return Status::InvalidArgument("runs[" + std::to_string(r) + "]." + valid.message());
  }
  Similarity out;
  GRIDCAST_ASSIGN_OR_RETURN(out.names, NodeOrder(runs, options.order));
  out.runs = static_cast<int>(runs.size());
  const int n = static_cast<int>(out.names.size());
  std::map<std::string, int> index;
  for (int i = 0; i < n; ++i) index[out.names[i]] = i;

  out.weight = DenseMatrix(n);
  std::vector<int> receiver_runs(n, 0);  // runs where the node was a member but not the source
  std::vector<uint64_t> received(n, 0);  // bytes received over all runs
  for (const Observations& run : runs) {
    for (const MemberObservation& m : run.members) {
      if (m.name != run.source) ++receiver_runs[index[m.name]];
    }
    const double receivers = static_cast<double>(run.members.size() - 1);
    if (receivers == 0) continue;  // a lone source: validation admits no pairs
    const double scale = 1.0 / (static_cast<double>(run.payload_bytes) * receivers);
    for (const PairObservation& p : run.pairs) {
      const int from = index[p.from], to = index[p.to];
      const double w = static_cast<double>(p.bytes) * scale;
      out.weight.at(from, to) += w;
      out.weight.at(to, from) += w;
      received[to] += p.bytes;
    }
  }

  std::vector<double> total(n, 0);
  std::vector<double> observed_totals;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) total[i] += out.weight.at(i, j);
    if (total[i] > 0) observed_totals.push_back(total[i]);
  }
  double median = 0;
  if (!observed_totals.empty()) {
    auto mid = observed_totals.begin() + static_cast<long>(observed_totals.size() / 2);
    std::nth_element(observed_totals.begin(), mid, observed_totals.end());
    median = *mid;
  }
  for (int i = 0; i < n; ++i) {
    const std::string& name = out.names[i];
    if (total[i] == 0) {
      out.flagged.push_back({name, "not observed: sent and received nothing in " +
                                       std::to_string(runs.size()) + " runs"});
    } else if (receiver_runs[i] > 0 && received[i] == 0) {
      out.flagged.push_back({name, "never received: a receiver in " +
                                       std::to_string(receiver_runs[i]) + " runs, got 0 bytes"});
    } else if (total[i] < options.min_weight_fraction * median) {
      out.flagged.push_back({name, "little data: total weight is " + Percent(total[i] / median) +
                                       " of the median node's (threshold " +
                                       Percent(options.min_weight_fraction) + ")"});
    }
  }
  return out;
}

}  // namespace gridcast
