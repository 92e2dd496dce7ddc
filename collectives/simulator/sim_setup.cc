#include "collectives/simulator/sim_setup.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

Status CheckOptions(const SimOptions& options) {
  if (!(options.per_message_overhead_s >= 0) || std::isinf(options.per_message_overhead_s)) {
    return Status::InvalidArgument("per-message overhead must be a finite number >= 0");
  }
  if (!(options.goodput_factor > 0 && options.goodput_factor <= 1)) {
    return Status::InvalidArgument("goodput factor must be in (0, 1]");
  }
  if (options.window_chunks < 1) return Status::InvalidArgument("window must be at least 1 chunk");
  if (!(options.flow_merge_fraction >= 0 && options.flow_merge_fraction < 1)) {
    return Status::InvalidArgument("flow merge fraction must be in [0, 1)");
  }
  return Status::Ok();
}

// Lays resources out densely: only those some edge crosses get an index.
class ResourceTable {
 public:
  ResourceTable(const NetworkModel& net, double goodput_factor)
      : net_(net), goodput_factor_(goodput_factor),
        index_(2 * (net.nodes.size() + net.switches.size()), -1) {}

  Result<int> Get(SimResource::Kind kind, int index) {
    const size_t key = kind == SimResource::kNodeUp     ? 2 * index
                       : kind == SimResource::kNodeDown ? 2 * index + 1
                       : 2 * (net_.nodes.size() + index) + (kind == SimResource::kUplinkDown);
    if (index_[key] >= 0) return index_[key];
    double bps = 0;
    std::string what;
    switch (kind) {
      case SimResource::kNodeUp:
        bps = net_.nodes[index].up_bps;
        what = "upload of node '" + net_.nodes[index].name + "'";
        break;
      case SimResource::kNodeDown:
        bps = net_.nodes[index].down_bps;
        what = "download of node '" + net_.nodes[index].name + "'";
        break;
      case SimResource::kUplinkUp:
        bps = net_.switches[index].uplink_up_bps;
        what = "uplink (up) of switch '" + net_.switches[index].name + "'";
        break;
      case SimResource::kUplinkDown:
        bps = net_.switches[index].uplink_down_bps;
        what = "uplink (down) of switch '" + net_.switches[index].name + "'";
        break;
    }
    if (!(bps > 0)) return Status::InvalidArgument("the " + what + " carries the plan but its rate is not positive");
    index_[key] = static_cast<int>(capacity_.size());
    capacity_.push_back(bps / 8 * goodput_factor_);
    info_.push_back({kind, index});
    return index_[key];
  }

  std::vector<double> TakeCapacities() { return std::move(capacity_); }
  std::vector<SimResource> TakeInfo() { return std::move(info_); }

 private:
  const NetworkModel& net_;
  double goodput_factor_;
  std::vector<int> index_;
  std::vector<double> capacity_;
  std::vector<SimResource> info_;
};

// The resources from node `from` to node `to`: its NIC out, the uplinks up to the lowest
// common switch, the uplinks down from there, the NIC in.
Result<std::vector<int>> PathResources(const NetworkModel& net, int from, int to, ResourceTable& table) {
  std::vector<int> up = net.PathToRoot(net.nodes[from].switch_index);
  std::vector<int> down = net.PathToRoot(net.nodes[to].switch_index);
  while (!up.empty() && !down.empty() && up.back() == down.back()) {
    up.pop_back();
    down.pop_back();
  }
  std::vector<int> resources;
  GRIDCAST_ASSIGN_OR_RETURN(int first, table.Get(SimResource::kNodeUp, from));
  resources.push_back(first);
  for (int s : up) {
    GRIDCAST_ASSIGN_OR_RETURN(int r, table.Get(SimResource::kUplinkUp, s));
    resources.push_back(r);
  }
  for (auto it = down.rbegin(); it != down.rend(); ++it) {
    GRIDCAST_ASSIGN_OR_RETURN(int r, table.Get(SimResource::kUplinkDown, *it));
    resources.push_back(r);
  }
  GRIDCAST_ASSIGN_OR_RETURN(int last, table.Get(SimResource::kNodeDown, to));
  resources.push_back(last);
  return resources;
}

}  // namespace

Result<SimSetup> BuildSimSetup(const Plan& plan, const NetworkModel& net, const SimOptions& options) {
  GRIDCAST_RETURN_IF_ERROR(CheckOptions(options));
  GRIDCAST_RETURN_IF_ERROR(ValidatePlan(plan));
  std::unordered_map<std::string, int> node_by_name;
  for (size_t v = 0; v < net.nodes.size(); ++v) node_by_name.emplace(net.nodes[v].name, static_cast<int>(v));
  std::vector<int> node_of;
  for (const std::string& name : plan.members) {
    auto it = node_by_name.find(name);
    if (it == node_by_name.end()) {
      return Status::InvalidArgument("member '" + name + "' is not a node of the network");
    }
    node_of.push_back(it->second);
  }

  SimSetup setup;
  setup.num_members = static_cast<int>(plan.members.size());
  ResourceTable table(net, options.goodput_factor);
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    const Lane& lane = plan.lanes[l];
    setup.lane_edge_begin.push_back(static_cast<int>(setup.edges.size()));
    std::vector<const Fanout*> fanout_of(setup.num_members, nullptr);
    for (const Fanout& fanout : lane.fanouts) fanout_of[fanout.parent] = &fanout;
    // Breadth-first; `into` is the edge that delivered each member.
    std::vector<int> into(setup.num_members, -1);
    std::vector<int> queue = {lane.source};
    for (size_t head = 0; head < queue.size(); ++head) {
      const int parent = queue[head];
      const Fanout* fanout = fanout_of[parent];
      if (fanout == nullptr) continue;
      for (size_t i = 0; i < fanout->children.size(); ++i) {
        SimEdge edge;
        edge.lane = static_cast<int>(l);
        edge.parent = parent;
        edge.child = fanout->children[i];
        edge.feeder = into[parent];
        edge.weight = lane.StreamsOn(*fanout, i);
        edge.delay_s = net.PathLatencySeconds(node_of[parent], node_of[edge.child]);
        GRIDCAST_ASSIGN_OR_RETURN(edge.resources,
                                  PathResources(net, node_of[parent], node_of[edge.child], table));
        into[edge.child] = static_cast<int>(setup.edges.size());
        queue.push_back(edge.child);
        setup.edges.push_back(std::move(edge));
      }
    }
  }
  setup.lane_edge_begin.push_back(static_cast<int>(setup.edges.size()));
  setup.capacity_bytes_per_s = table.TakeCapacities();
  setup.resource_info = table.TakeInfo();
  return setup;
}

SimResult EmptySimResult(const SimSetup& setup, const NetworkModel& net, SimMode mode) {
  SimResult result;
  result.mode = mode;
  result.member_completion_s.assign(setup.num_members, 0);
  result.node_sent_bytes.assign(net.nodes.size(), 0);
  result.node_received_bytes.assign(net.nodes.size(), 0);
  result.uplink_up_bytes.assign(net.switches.size(), 0);
  result.uplink_down_bytes.assign(net.switches.size(), 0);
  return result;
}

void CountEdgeBytes(const SimSetup& setup, const SimEdge& edge, uint64_t bytes, SimResult& result) {
  for (int r : edge.resources) {
    const SimResource& info = setup.resource_info[r];
    switch (info.kind) {
      case SimResource::kNodeUp: result.node_sent_bytes[info.index] += bytes; break;
      case SimResource::kNodeDown: result.node_received_bytes[info.index] += bytes; break;
      case SimResource::kUplinkUp: result.uplink_up_bytes[info.index] += bytes; break;
      case SimResource::kUplinkDown: result.uplink_down_bytes[info.index] += bytes; break;
    }
  }
}

}  // namespace gridcast
