// The flow-level engine against the chunk-level reference on a grid of plans: every registered
// broadcast planner, p in {2, 3, 8, 16, 33}, one and four streams per edge, without and with
// the daemon's per-chunk overhead, on the three network shapes of deploy/topologies (flat16,
// two-sites, mixed-nics) scaled to p nodes. The issue asks both engines to agree within 3%
// wherever both run.
//
// Where they do not (documented in simulator.h; FlowLevelFits() is false there and kAuto runs
// the chunk level): plans of lanes with few chunks per hop. In the grid that is
// scatter-allgather at p = 8 and 16 (7 and 3 chunks per lane over 8 and 16 hops; the flow
// level is 3% to 19% slow) and scatter-allgather-rd at p = 8 (+5%). The fluid keeps every
// hop of such a lane trailing its feeder by about a chunk while the nodes' links are full, so
// the lag adds up along the path; at chunk level the lanes' chunks interleave and the links
// stay busy with whichever chunk has arrived. At p = 33 every lane has one or two chunks and
// the two agree again. Edges with different stream counts in one plan are the other case
// (MixedStreamCountsAreOutsideTheFlowLevel below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "collectives/registry.h"
#include "collectives/simulator/sim_setup.h"
#include "collectives/topology.h"
#include "collectives/simulator/simulator.h"
#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

constexpr double kMaxDisagreement = 0.03;
// Outside FlowLevelFits() the flow level is pessimistic by at most this much in the grid.
constexpr double kMaxOutsideDisagreement = 0.25;

// deploy/topologies/mixed-nics.yaml's proportions on p nodes: a quarter 300mbit (the source
// among them), a quarter 30mbit up / 100mbit down, the rest 100mbit.
NetworkModel MixedNics(int p) {
  NetworkModel net = OneSwitch(p, 100e6);
  net.name = "mixed-nics";
  for (int v = 0; v < p; ++v) {
    if (v % 4 == 0) net.nodes[v].up_bps = net.nodes[v].down_bps = 300e6;
    if (v % 4 == 3) net.nodes[v].up_bps = 30e6;
  }
  return net;
}

// deploy/topologies/two-sites.yaml on p nodes: half behind a 400mbit uplink (with the
// source), half behind a 50mbit one, 5 ms per uplink.
NetworkModel TwoSitesShape(int p) {
  NetworkModel net = TwoSites(p - p / 2, p / 2, 100e6, 400e6, 50e6, 0.005);
  net.name = "two-sites";
  return net;
}

NetworkModel Flat(int p) {
  NetworkModel net = OneSwitch(p, 100e6);
  net.name = "flat";
  return net;
}

double Completion(const Plan& plan, const NetworkModel& net, SimMode mode, double overhead_s) {
  SimOptions options;
  options.mode = mode;
  options.per_message_overhead_s = overhead_s;
  Result<SimResult> result = SimulatePlan(plan, net, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? result->completion_s : 0;
}

// Runs the grid on one network shape with `streams` per edge and returns the worst |flow / chunk - 1| per planner.
std::map<std::string, double> Sweep(NetworkModel (*shape)(int), int streams) {
  // 48 chunks of 256 KiB (the last one short): enough to stream on the trees, few enough
  // that the scatter plans' lanes are short (one or two chunks for p = 33).
  const uint64_t chunk = 256 << 10;
  const uint64_t payload = 48 * chunk - 5000;
  std::map<std::string, double> worst;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind != PlannerKind::kBroadcast || info.name == "auto") continue;
    Result<std::unique_ptr<Planner>> planner = MakePlanner(info.name);
    EXPECT_TRUE(planner.ok()) << planner.status().ToString();
    if (!planner.ok()) continue;
    for (int p : {2, 3, 8, 16, 33}) {
      const NetworkModel net = shape(p);
      {
        PlanOptions options;
        options.chunk_bytes = chunk;
        options.streams = streams;
        Result<Plan> plan = (*planner)->MakePlan(net, payload, options);
        EXPECT_TRUE(plan.ok()) << info.name << ": " << plan.status().ToString();
        if (!plan.ok()) continue;
        const bool fits = FlowLevelFits(*plan, BuildSimSetup(*plan, net, {}).value());
        for (double overhead_s : {0.0, kDaemonPerChunkOverheadS}) {
          const double exact = Completion(*plan, net, SimMode::kChunkLevel, overhead_s);
          const double fast = Completion(*plan, net, SimMode::kFlowLevel, overhead_s);
          const double error = fast / exact - 1;
          worst[info.name] = std::max(worst[info.name], std::abs(error));
          EXPECT_TRUE(fits ? std::abs(error) <= kMaxDisagreement
                           : error >= -kMaxDisagreement && error <= kMaxOutsideDisagreement)
              << info.name << " on " << net.name << ", p = " << p << ", " << streams
              << " streams, overhead " << overhead_s << " s: chunk " << exact << " s, flow " << fast
              << " s, flow level fits: " << fits;
        }
      }
    }
  }
  return worst;
}

void Report(const std::string& shape, const std::map<std::string, double>& worst) {
  std::printf("flow vs chunk on %s, worst |error| per planner:", shape.c_str());
  for (const auto& [name, error] : worst) std::printf(" %s %.4f", name.c_str(), error);
  std::printf("\n");
}

// A plan whose WAN edges have 4 streams and the others 1 ([ML] 2 x 16, multilane-sites as it
// once was): the flow level is 25% fast. A fed edge in the fluid follows its feeder's rate,
// while at chunk level its 4 shares squeeze the parent's other children whenever it has a
// chunk, and that delay spreads down their subtrees. kAuto keeps such plans at chunk level.
TEST(EngineAgreement, MixedStreamCountsAreOutsideTheFlowLevel) {
  Result<NetworkModel> net = ParseTopology(R"(
name: paper-ml-2x16
switches:
  - name: core
  - name: site-a
    parent: core
    latency: 5ms
  - name: site-b
    parent: core
    latency: 5ms
nodes:
  - switch: site-a
    count: 16
    up: 1gbit
    down: 1gbit
  - switch: site-b
    count: 16
    up: 1gbit
    down: 1gbit
)");
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  Result<std::unique_ptr<Planner>> planner = MakePlanner("multilane-sites");
  ASSERT_TRUE(planner.ok());
  PlanOptions options;
  Result<Plan> plan = (*planner)->MakePlan(*net, 256 << 20, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const double same = Completion(*plan, *net, SimMode::kChunkLevel, 0);
  EXPECT_NEAR(Completion(*plan, *net, SimMode::kFlowLevel, 0) / same, 1, kMaxDisagreement);
  // The members are named site-a-* and site-b-*: the 13th character tells the site.
  for (Lane& lane : plan->lanes) {
    for (Fanout& fanout : lane.fanouts) {
      fanout.streams.assign(fanout.children.size(), 1);
      for (size_t i = 0; i < fanout.children.size(); ++i) {
        if (plan->members[fanout.parent][5] != plan->members[fanout.children[i]][5]) fanout.streams[i] = 4;
      }
    }
  }
  EXPECT_FALSE(FlowLevelFits(*plan, BuildSimSetup(*plan, *net, {}).value()));
  const double exact = Completion(*plan, *net, SimMode::kChunkLevel, 0);
  const double fast = Completion(*plan, *net, SimMode::kFlowLevel, 0);
  EXPECT_GT(exact, 1.2 * same);
  EXPECT_LT(fast, 1.01 * same) << "the fluid misses the 4-stream edges' squeeze";
  SimOptions auto_mode;
  EXPECT_EQ(SimulatePlan(*plan, *net, auto_mode)->mode, SimMode::kChunkLevel);
}

// One test per network and stream count, to keep each short.
TEST(EngineAgreement, Flat) { Report("flat, 1 stream", Sweep(Flat, 1)); }
TEST(EngineAgreement, FlatFourStreams) { Report("flat, 4 streams", Sweep(Flat, 4)); }
TEST(EngineAgreement, TwoSites) { Report("two-sites, 1 stream", Sweep(TwoSitesShape, 1)); }
TEST(EngineAgreement, TwoSitesFourStreams) { Report("two-sites, 4 streams", Sweep(TwoSitesShape, 4)); }
TEST(EngineAgreement, MixedNics) { Report("mixed-nics, 1 stream", Sweep(MixedNics, 1)); }
TEST(EngineAgreement, MixedNicsFourStreams) { Report("mixed-nics, 4 streams", Sweep(MixedNics, 4)); }

}  // namespace
}  // namespace gridcast
