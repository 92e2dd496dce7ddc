#include "collectives/simulator/max_min_fair.h"

#include <algorithm>
#include <cassert>
#include <functional>

namespace gridcast {
namespace {

constexpr int kResourceFills = 0;
constexpr int kCapReached = 1;

// Builds a CSR index: for each key, the items whose key it is, in item order.
void BuildIndex(int num_keys, const std::vector<int>& key_of_item_begin,
                const std::vector<int>& keys, std::vector<int>& begin, std::vector<int>& items) {
  begin.assign(num_keys + 1, 0);
  for (int key : keys) ++begin[key + 1];
  for (int k = 0; k < num_keys; ++k) begin[k + 1] += begin[k];
  items.resize(keys.size());
  std::vector<int> next(begin.begin(), begin.end() - 1);
  const int num_items = static_cast<int>(key_of_item_begin.size()) - 1;
  for (int item = 0; item < num_items; ++item) {
    for (int i = key_of_item_begin[item]; i < key_of_item_begin[item + 1]; ++i) {
      items[next[keys[i]]++] = item;
    }
  }
}

}  // namespace

void FairShareProblem::Clear(int num_resources) {
  capacity.assign(num_resources, kInfinity);
  resource_begin.assign(1, 0);
  resources.clear();
  weight.clear();
  cap.clear();
  feeder.clear();
}

int FairShareProblem::AddFlow(const std::vector<int>& flow_resources, double flow_weight,
                              double flow_cap, int flow_feeder) {
  assert(flow_weight > 0 && flow_feeder < NumFlows());
  resources.insert(resources.end(), flow_resources.begin(), flow_resources.end());
  resource_begin.push_back(static_cast<int>(resources.size()));
  weight.push_back(flow_weight);
  cap.push_back(flow_cap);
  feeder.push_back(flow_feeder);
  return NumFlows() - 1;
}

const std::vector<double>& MaxMinFairSolver::Solve(const FairShareProblem& problem) {
  const int num_flows = problem.NumFlows();
  const int num_resources = static_cast<int>(problem.capacity.size());
  rate_.assign(num_flows, kInfinity);
  frozen_.assign(num_flows, false);
  cap_ = problem.cap;
  // A fed flow grows no faster than its feeder, so it grows with the smaller weight.
  effective_weight_ = problem.weight;
  for (int f = 0; f < num_flows; ++f) {
    if (problem.feeder[f] >= 0) {
      effective_weight_[f] = std::min(effective_weight_[f], effective_weight_[problem.feeder[f]]);
    }
  }
  BuildIndex(num_resources, problem.resource_begin, problem.resources, flows_begin_, flows_);
  std::vector<int> feeder_begin(num_flows + 1);
  std::vector<int> feeder_keys;
  for (int f = 0; f < num_flows; ++f) {
    if (problem.feeder[f] >= 0) feeder_keys.push_back(problem.feeder[f]);
    feeder_begin[f + 1] = static_cast<int>(feeder_keys.size());
  }
  BuildIndex(num_flows, feeder_begin, feeder_keys, fed_begin_, fed_);

  remaining_ = problem.capacity;
  weight_sum_.assign(num_resources, 0);
  version_.assign(num_resources, 0);
  touched_.assign(num_resources, false);
  touched_list_.clear();
  for (int f = 0; f < num_flows; ++f) {
    for (int i = problem.resource_begin[f]; i < problem.resource_begin[f + 1]; ++i) {
      weight_sum_[problem.resources[i]] += effective_weight_[f];
    }
  }
  heap_.clear();
  for (int r = 0; r < num_resources; ++r) PushResource(r);
  for (int f = 0; f < num_flows; ++f) {
    if (cap_[f] < kInfinity) {
      heap_.push_back({cap_[f] / effective_weight_[f], kCapReached, f, 0});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }
  }

  double level = 0;
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Event event = heap_.back();
    heap_.pop_back();
    // Rounding can put a refreshed level a hair below the current one; levels never fall.
    level = std::max(level, event.level);
    if (event.kind == kCapReached) {
      // Caps only fall, so the first cap event popped for a flow is its current cap.
      if (!frozen_[event.index]) Freeze(problem, event.index, cap_[event.index]);
      PushTouched();
      continue;
    }
    if (event.version != version_[event.index]) continue;
    for (int i = flows_begin_[event.index]; i < flows_begin_[event.index + 1]; ++i) {
      const int f = flows_[i];
      if (!frozen_[f]) Freeze(problem, f, effective_weight_[f] * level);
    }
    PushTouched();
  }
  return rate_;
}

void MaxMinFairSolver::Freeze(const FairShareProblem& problem, int flow, double rate) {
  rate = std::min(rate, cap_[flow]);
  frozen_[flow] = true;
  rate_[flow] = rate;
  for (int i = problem.resource_begin[flow]; i < problem.resource_begin[flow + 1]; ++i) {
    const int r = problem.resources[i];
    remaining_[r] = std::max(0.0, remaining_[r] - rate);
    weight_sum_[r] -= effective_weight_[flow];
    ++version_[r];
    if (!touched_[r]) {
      touched_[r] = true;
      touched_list_.push_back(r);
    }
  }
  for (int i = fed_begin_[flow]; i < fed_begin_[flow + 1]; ++i) {
    const int fed = fed_[i];
    if (frozen_[fed] || rate >= cap_[fed]) continue;
    cap_[fed] = rate;
    heap_.push_back({rate / effective_weight_[fed], kCapReached, fed, 0});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
}

void MaxMinFairSolver::PushTouched() {
  for (int r : touched_list_) {
    touched_[r] = false;
    PushResource(r);
  }
  touched_list_.clear();
}

void MaxMinFairSolver::PushResource(int resource) {
  // Weight sums are sums of doubles; treat a leftover below one part in 1e9 as no flows.
  if (remaining_[resource] == kInfinity || weight_sum_[resource] <= 1e-9) return;
  heap_.push_back({remaining_[resource] / weight_sum_[resource], kResourceFills, resource,
                   version_[resource]});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

}  // namespace gridcast
