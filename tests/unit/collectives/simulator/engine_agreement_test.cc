// The flow-level engine against the chunk-level reference on a grid of plans: every registered
// broadcast planner, p in {2, 3, 8, 16, 33}, one and four streams per edge, without and with
// the daemon's per-chunk overhead, on the three network shapes of deploy/topologies (flat16,
// two-sites, mixed-nics) scaled to p nodes, and the same plans with mixed stream counts (four
// streams on the edges between sites, or on every other edge). The issue asks both engines to
// agree within 3% wherever both run; every case asserts it.
//
// Two kinds of plans needed the flow level to step lanes chunk by chunk (flow_simulator.h):
// scatter-allgather(-rd), whose lanes have few chunks per hop (at p = 16, 3 chunks over 16
// hops; the trailing fluid was up to 18% slow), and plans mixing stream counts (the fluid was
// 25% fast on the 4-stream WAN plan of MixedStreamCountsSqueeze below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "collectives/registry.h"
#include "collectives/topology.h"
#include "collectives/simulator/simulator.h"
#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

constexpr double kMaxDisagreement = 0.03;

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

double Completion(const Plan& plan, const NetworkModel& net, SimMode mode, double overhead_s,
                  bool trail_short_lanes = false) {
  SimOptions options;
  options.mode = mode;
  options.per_message_overhead_s = overhead_s;
  options.flow_trail_short_lanes = trail_short_lanes;
  Result<SimResult> result = SimulatePlan(plan, net, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? result->completion_s : 0;
}

// Sets every edge's stream count to streams(parent, child, position among the children).
template <typename StreamsOf>
void SetStreams(Plan& plan, StreamsOf streams) {
  for (Lane& lane : plan.lanes) {
    for (Fanout& fanout : lane.fanouts) {
      fanout.streams.resize(fanout.children.size());
      for (size_t i = 0; i < fanout.children.size(); ++i) {
        fanout.streams[i] = streams(fanout.parent, fanout.children[i], i);
      }
    }
  }
}

// How the grid sets stream counts: the planner's (one count for every edge), four on the edges
// between the two sites' switches and one elsewhere, or four and one on alternate children.
enum class Streams { kPlanner, kWanFour, kAlternate };

// The grid's sizes: 48 chunks of 256 KiB (the last one short) on p in {2, 3, 8, 16, 33}, so
// the scatter plans' lanes are short (one or two chunks at p = 33) and most lanes of the
// deeper plans are stepped. Long lanes (512 chunks on 16 members) trail their feeders.
struct Sizes {
  std::vector<int> members = {2, 3, 8, 16, 33};
  uint64_t chunks = 48;
};
const Sizes kLongLanes = {{16}, 512};

// Calls visit(planner name, network, plan) for every plan of the grid on one network shape,
// with `streams` per edge (then mixed as `mix` says).
template <typename Visit>
void ForEachGridPlan(NetworkModel (*shape)(int), int streams, Streams mix, const Sizes& sizes,
                     Visit visit) {
  const uint64_t chunk = 256 << 10;
  const uint64_t payload = sizes.chunks * chunk - 5000;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind != PlannerKind::kBroadcast || info.name == "auto") continue;
    Result<std::unique_ptr<Planner>> planner = MakePlanner(info.name);
    EXPECT_TRUE(planner.ok()) << planner.status().ToString();
    if (!planner.ok()) continue;
    for (int p : sizes.members) {
      const NetworkModel net = shape(p);
      PlanOptions options;
      options.chunk_bytes = chunk;
      options.streams = streams;
      Result<Plan> plan = (*planner)->MakePlan(net, payload, options);
      EXPECT_TRUE(plan.ok()) << info.name << ": " << plan.status().ToString();
      if (!plan.ok()) continue;
      if (mix == Streams::kWanFour) {
        SetStreams(*plan, [&](int parent, int child, size_t) {
          const int from = *net.FindNode(plan->members[parent]);
          const int to = *net.FindNode(plan->members[child]);
          return net.nodes[from].switch_index == net.nodes[to].switch_index ? 1 : 4;
        });
      } else if (mix == Streams::kAlternate) {
        SetStreams(*plan, [](int, int, size_t i) { return i % 2 == 0 ? 4 : 1; });
      }
      visit(info.name, net, *plan);
    }
  }
}

// Runs the grid on one network shape with `streams` per edge (then mixed as `mix` says) and
// returns the worst |flow / chunk - 1| per planner.
std::map<std::string, double> Sweep(NetworkModel (*shape)(int), int streams,
                                    Streams mix = Streams::kPlanner, const Sizes& sizes = {}) {
  std::map<std::string, double> worst;
  ForEachGridPlan(shape, streams, mix, sizes, [&](const std::string& name, const NetworkModel& net, const Plan& plan) {
    for (double overhead_s : {0.0, kDaemonPerChunkOverheadS}) {
      const double exact = Completion(plan, net, SimMode::kChunkLevel, overhead_s);
      const double fast = Completion(plan, net, SimMode::kFlowLevel, overhead_s);
      const double error = std::abs(fast / exact - 1);
      worst[name] = std::max(worst[name], error);
      EXPECT_LE(error, kMaxDisagreement)
          << name << " on " << net.name << ", p = " << plan.members.size() << ", " << streams
          << " streams, overhead " << overhead_s << " s: chunk " << exact << " s, flow " << fast << " s";
    }
  });
  return worst;
}

void Report(const std::string& shape, const std::map<std::string, double>& worst) {
  std::printf("flow vs chunk on %s, worst |error| per planner:", shape.c_str());
  for (const auto& [name, error] : worst) std::printf(" %s %.4f", name.c_str(), error);
  std::printf("\n");
}

// A plan whose WAN edges have 4 streams and the others 1 ([ML] 2 x 16, multilane-sites as it
// once was). At chunk level the 4-stream edges squeeze their senders' other edges whenever
// they have a chunk, and the delay spreads down those edges' subtrees: 3.09 s against 2.20 s
// with one stream everywhere. The trailing fluid missed it (2.30 s, its fed edge followed its
// feeder's rate); the flow level steps plans of mixed stream counts and agrees.
TEST(EngineAgreement, MixedStreamCountsSqueeze) {
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
  // The members are named site-a-* and site-b-*: the 6th character tells the site.
  SetStreams(*plan, [&](int parent, int child, size_t) {
    return plan->members[parent][5] != plan->members[child][5] ? 4 : 1;
  });
  const double exact = Completion(*plan, *net, SimMode::kChunkLevel, 0);
  EXPECT_GT(exact, 1.2 * same);
  EXPECT_NEAR(Completion(*plan, *net, SimMode::kFlowLevel, 0) / exact, 1, kMaxDisagreement);
}

// One test per network and stream count, to keep each short.
TEST(EngineAgreement, Flat) { Report("flat, 1 stream", Sweep(Flat, 1)); }
TEST(EngineAgreement, FlatFourStreams) { Report("flat, 4 streams", Sweep(Flat, 4)); }
TEST(EngineAgreement, TwoSites) { Report("two-sites, 1 stream", Sweep(TwoSitesShape, 1)); }
TEST(EngineAgreement, TwoSitesFourStreams) { Report("two-sites, 4 streams", Sweep(TwoSitesShape, 4)); }
TEST(EngineAgreement, MixedNics) { Report("mixed-nics, 1 stream", Sweep(MixedNics, 1)); }
TEST(EngineAgreement, MixedNicsFourStreams) { Report("mixed-nics, 4 streams", Sweep(MixedNics, 4)); }
TEST(EngineAgreement, TwoSitesFourStreamsBetweenSites) {
  Report("two-sites, 4 streams between sites, 1 within", Sweep(TwoSitesShape, 1, Streams::kWanFour));
}
TEST(EngineAgreement, FlatStreamsOneAndFour) {
  Report("flat, 4 and 1 streams on alternate children", Sweep(Flat, 1, Streams::kAlternate));
}
TEST(EngineAgreement, TwoSitesLongLanes) {
  Report("two-sites, 512 chunks", Sweep(TwoSitesShape, 1, Streams::kPlanner, kLongLanes));
}
TEST(EngineAgreement, MixedNicsLongLanes) {
  Report("mixed-nics, 512 chunks", Sweep(MixedNics, 1, Streams::kPlanner, kLongLanes));
}
TEST(EngineAgreement, MixedNicsStreamsOneAndFour) {
  Report("mixed-nics, 4 and 1 streams on alternate children", Sweep(MixedNics, 1, Streams::kAlternate));
}


// SimOptions::flow_trail_short_lanes (what auto uses above 256 members, where stepping costs
// seconds): lanes of at least 16 chunks trail their feeders however deep their paths. On the
// grid (48 chunks: a chain's one lane over up to 32 hops, two-lane trees of 24 chunks, ...) the
// fluid stays within 0.2% of the chunk level and is never 1% fast, so predictions stay honest.
// Counting lanes of one or two chunks too (scatter-allgather at p = 33) let the fluid be 2.3%
// fast on two-sites: shorter lanes are still stepped.
TEST(EngineAgreement, TrailingShortLanesIsNeverFast) {
  double fastest = 0, slowest = 0;  // the extreme flow / chunk - 1
  for (NetworkModel (*shape)(int) : {Flat, TwoSitesShape, MixedNics}) {
    for (int streams : {1, 4}) {
      ForEachGridPlan(shape, streams, Streams::kPlanner, {}, [&](const std::string& name, const NetworkModel& net,
                                                                 const Plan& plan) {
        for (double overhead_s : {0.0, kDaemonPerChunkOverheadS}) {
          const double exact = Completion(plan, net, SimMode::kChunkLevel, overhead_s);
          const double trailing = Completion(plan, net, SimMode::kFlowLevel, overhead_s, true);
          fastest = std::min(fastest, trailing / exact - 1);
          slowest = std::max(slowest, trailing / exact - 1);
          EXPECT_GE(trailing / exact, 0.99) << name << " on " << net.name << ", p = " << plan.members.size()
                                            << ", overhead " << overhead_s << " s: chunk " << exact
                                            << " s, trailing " << trailing << " s";
        }
      });
    }
  }
  std::printf("trailing short lanes against the chunk level: %.4f to %+.4f\n", fastest, slowest);
}

}  // namespace
}  // namespace gridcast
