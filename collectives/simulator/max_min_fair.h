// Weighted max-min fair rates of flows over shared resources (progressive filling).
//
// Every flow crosses a set of resources (NIC directions, uplink directions), each with a
// capacity. All flows grow together, a flow of weight w at w times the common level, until a
// resource fills (its flows freeze) or a flow reaches its own cap. A flow may also be "fed" by
// another flow: it can never carry more than its feeder (a lane edge cannot forward a lane
// faster than its parent receives it), so it grows with the smaller weight of the two and
// freezes at its feeder's rate at the latest.
//
// Complexity: O((F·L + R) log(F + R)) for F flows crossing L resources each and R resources,
// using a heap of the next level at which each resource or cap is reached (no rescan of all
// resources per bottleneck). Pure; thread-compatible (the solver keeps scratch buffers).
#pragma once

#include <limits>
#include <vector>

namespace gridcast {

// No limit (a rate), or never (a time).
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct FairShareProblem {
  std::vector<double> capacity;        // per resource; +infinity = never a bottleneck
  // Flow f crosses resources[resource_begin[f] .. resource_begin[f + 1]); the vector holds
  // one more entry than there are flows.
  std::vector<int> resource_begin = {0};
  std::vector<int> resources;
  std::vector<double> weight;          // per flow, > 0
  std::vector<double> cap;             // per flow, +infinity = none
  std::vector<int> feeder;             // per flow, -1 or an earlier flow (feeder[f] < f)

  int NumFlows() const { return static_cast<int>(weight.size()); }
  void Clear(int num_resources);
  // Appends a flow and returns its index.
  int AddFlow(const std::vector<int>& flow_resources, double flow_weight, double flow_cap,
              int flow_feeder);
};

class MaxMinFairSolver {
 public:
  // Rates per flow, in the unit of the capacities; +infinity for a flow no finite resource or
  // cap limits. The reference stays valid until the next call.
  const std::vector<double>& Solve(const FairShareProblem& problem);

 private:
  struct Event {
    double level;
    int kind;  // 0 = resource fills, 1 = flow reaches its cap (resources first on ties)
    int index;
    int version;
    bool operator>(const Event& other) const {
      if (level != other.level) return level > other.level;
      if (kind != other.kind) return kind > other.kind;
      return index > other.index;
    }
  };

  void Freeze(const FairShareProblem& problem, int flow, double rate);
  // Pushes the new fill levels of the resources touched since the last call.
  void PushTouched();
  void PushResource(int resource);

  std::vector<double> rate_;
  std::vector<double> effective_weight_;
  std::vector<double> cap_;
  std::vector<bool> frozen_;
  std::vector<double> remaining_;
  std::vector<double> weight_sum_;
  std::vector<int> version_;
  std::vector<bool> touched_;
  std::vector<int> touched_list_;
  std::vector<int> flows_begin_;  // resource -> its flows, CSR
  std::vector<int> flows_;
  std::vector<int> fed_begin_;    // flow -> the flows it feeds, CSR
  std::vector<int> fed_;
  std::vector<Event> heap_;
};

}  // namespace gridcast
