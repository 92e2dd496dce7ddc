// SimulatePlan against closed forms, hand-computed sharing, latency, determinism, and the
// agreement of its two engines.
#include "collectives/simulator/simulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "collectives/registry.h"
#include "collectives/validate_plan.h"
#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

constexpr double kBps = 100e6;
constexpr double kBytesPerS = kBps / 8;
constexpr uint64_t kChunk = 1 << 20;

SimOptions Mode(SimMode mode) {
  SimOptions options;
  options.mode = mode;
  return options;
}

SimResult Simulate(const Plan& plan, const NetworkModel& net, const SimOptions& options) {
  Result<SimResult> result = SimulatePlan(plan, net, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : SimResult{};
}

Plan FromPlanner(const std::string& name, const NetworkModel& net, uint64_t payload_bytes,
                 uint64_t chunk_bytes) {
  Result<std::unique_ptr<Planner>> planner = MakePlanner(name);
  EXPECT_TRUE(planner.ok()) << planner.status().ToString();
  PlanOptions options;
  options.chunk_bytes = chunk_bytes;
  Result<Plan> plan = (*planner)->MakePlan(net, payload_bytes, options);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : Plan{};
}

// Each node under its own switch below the core; an uplink costs `latency_s` one way, so a
// hop between two nodes costs 2 * latency_s.
NetworkModel SwitchPerNode(int p, double latency_s) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  for (int i = 0; i < p; ++i) {
    net.switches.push_back({"s" + std::to_string(i), 0, kUnshaped, kUnshaped, latency_s});
    net.nodes.push_back({"n" + std::to_string(i), i + 1, kBps, kBps});
  }
  return net;
}

class BothModes : public ::testing::TestWithParam<SimMode> {
 protected:
  SimOptions Options() const { return Mode(GetParam()); }
};

TEST_P(BothModes, ChainIsStoreAndForwardPipeline) {
  // C chunks through p - 1 hops, each chunk holding its edge for the overhead o and then its
  // transmission: the last chunk leaves the source after C such slots and then crosses p - 2
  // more hops: (C + p - 2) * (chunk / b + o) + (p - 1) * l.
  const int p = 6;
  const uint64_t chunks = 32;
  const NetworkModel net = SwitchPerNode(p, 0.001);
  SimOptions options = Options();
  options.per_message_overhead_s = 0.0005;
  const SimResult result = Simulate(FromPlanner("chain", net, chunks * kChunk, kChunk), net, options);
  const double expected = (chunks + p - 2) * (kChunk / kBytesPerS + 0.0005) + (p - 1) * 0.002;
  EXPECT_NEAR(result.completion_s, expected, 1e-6 * expected);
  EXPECT_EQ(result.mode, GetParam());
}

TEST_P(BothModes, FlatSharesTheSourceUpload) {
  // p - 1 transfers share the source's upload the whole time: (p - 1) * M / b + l.
  const int p = 5;
  const uint64_t payload = 16 * kChunk;
  const NetworkModel net = SwitchPerNode(p, 0.001);
  const SimResult result = Simulate(FromPlanner("flat", net, payload, kChunk), net, Options());
  const double expected = (p - 1) * payload / kBytesPerS + 0.002;
  EXPECT_NEAR(result.completion_s, expected, 1e-6 * expected);
  EXPECT_EQ(result.node_sent_bytes[0], (p - 1) * payload);
  for (int v = 1; v < p; ++v) EXPECT_EQ(result.node_received_bytes[v], payload);
}

TEST_P(BothModes, BinaryTreeIsTwiceTheChainRate) {
  // Every parent feeds two children at b/2: a leaf at depth D holds the payload after
  // 2 (C + D - 1) chunk / b + D l.
  const int p = 15;
  const int depth = 3;
  const uint64_t chunks = 64;
  const NetworkModel net = SwitchPerNode(p, 0.001);
  const SimResult result = Simulate(BinaryTreePlan(net, chunks * kChunk, kChunk), net, Options());
  const double expected = 2.0 * (chunks + depth - 1) * kChunk / kBytesPerS + depth * 0.002;
  EXPECT_NEAR(result.completion_s, expected, 0.03 * expected);
  EXPECT_NEAR(result.completion_s, expected, 1e-6 * expected) << "exact in this model";
}

TEST_P(BothModes, LatencyIsAddedOncePerHop) {
  // A 4-member chain crosses 3 hops of 2 * 5 ms each; with a window large enough to cover
  // the latency the only change is 3 * 10 ms.
  const NetworkModel fast = SwitchPerNode(4, 0);
  const NetworkModel slow = SwitchPerNode(4, 0.005);
  const Plan plan = FromPlanner("chain", fast, 20 * kChunk, kChunk);
  const double base = Simulate(plan, fast, Options()).completion_s;
  EXPECT_NEAR(Simulate(plan, slow, Options()).completion_s - base, 0.030, 1e-9);
}

TEST_P(BothModes, BottleneckUplinkLimitsCrossSiteFlows) {
  // Source (1gbit up) sends to 3 members in its site (100mbit down each) and 3 behind a
  // 30mbit uplink: those get 10mbit each, the local ones their full 100mbit.
  NetworkModel net = TwoSites(4, 3, kBps, 1e9, 30e6, 0.001);
  net.nodes[0].up_bps = 1e9;
  const uint64_t payload = 4 * kChunk;
  const SimResult result = Simulate(FromPlanner("flat", net, payload, kChunk), net, Options());
  for (int m = 1; m < 4; ++m) {
    EXPECT_NEAR(result.member_completion_s[m], payload * 8 / 100e6, 1e-6) << m;
  }
  for (int m = 4; m < 7; ++m) {
    EXPECT_NEAR(result.member_completion_s[m], payload * 8 / 10e6 + 0.002, 1e-6) << m;
  }
  EXPECT_EQ(result.uplink_up_bytes[1], 3 * payload);
  EXPECT_EQ(result.uplink_down_bytes[2], 3 * payload);
  EXPECT_EQ(result.uplink_down_bytes[1], 0u);
}

TEST_P(BothModes, SmallWindowStopsAndWaits) {
  // One chunk in flight: every chunk pays transmission plus delay before the next may go.
  // (The flow level spreads the window's waits over the stream: within 3%.)
  const NetworkModel net = OneSwitch(2, kBps);
  SimOptions options = Options();
  options.window_chunks = 1;
  options.per_message_overhead_s = 0.05;
  const SimResult result = Simulate(FromPlanner("chain", net, 40 * kChunk, kChunk), net, options);
  const double expected = 40 * (kChunk / kBytesPerS + 0.05);
  EXPECT_NEAR(result.completion_s, expected, (GetParam() == SimMode::kChunkLevel ? 1e-9 : 0.03) * expected);
}

TEST_P(BothModes, GoodputFactorScalesRates) {
  const NetworkModel net = OneSwitch(4, kBps);
  SimOptions options = Options();
  options.goodput_factor = 0.955;
  const SimResult result = Simulate(FromPlanner("flat", net, 8 * kChunk, kChunk), net, options);
  EXPECT_NEAR(result.completion_s, 3 * 8 * kChunk / (kBytesPerS * 0.955), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Simulator, BothModes,
                         ::testing::Values(SimMode::kChunkLevel, SimMode::kFlowLevel),
                         [](const auto& param_info) {
                           return std::string(param_info.param == SimMode::kChunkLevel ? "Chunk" : "Flow");
                         });

TEST(Simulator, ChunkLevelIsDeterministic) {
  NetworkModel net = TwoSites(5, 6, kBps, 400e6, 50e6, 0.004);
  for (int v = 0; v < 11; v += 3) net.nodes[v].up_bps = 30e6;
  const Plan plan = TwoTreesPlan(net, 40 * (kChunk / 4) + 123, kChunk / 4);
  const SimResult a = Simulate(plan, net, Mode(SimMode::kChunkLevel));
  const SimResult b = Simulate(plan, net, Mode(SimMode::kChunkLevel));
  EXPECT_EQ(a.completion_s, b.completion_s);
  EXPECT_EQ(a.member_completion_s, b.member_completion_s);
  EXPECT_EQ(a.node_sent_bytes, b.node_sent_bytes);
  EXPECT_EQ(a.uplink_down_bytes, b.uplink_down_bytes);
  EXPECT_GT(a.completion_s, 0);
}

TEST(Simulator, AutoPicksTheEngineByChunkTransfers) {
  const NetworkModel net = OneSwitch(5, kBps);
  const Plan plan = FromPlanner("chain", net, 40 * kChunk, kChunk);  // 160 transfers
  SimOptions options;
  EXPECT_EQ(Simulate(plan, net, options).mode, SimMode::kChunkLevel);
  options.max_chunk_transfers = 160;
  EXPECT_EQ(Simulate(plan, net, options).mode, SimMode::kChunkLevel);
  options.max_chunk_transfers = 159;
  EXPECT_EQ(Simulate(plan, net, options).mode, SimMode::kFlowLevel);
  // Short lanes over long paths get no larger budget: the flow level steps them.
  const Plan ring = ScatterRingPlan(net, 12 * kChunk, kChunk);  // 4 lanes of 3 chunks, 4 hops
  options.max_chunk_transfers = 48;
  EXPECT_EQ(Simulate(ring, net, options).mode, SimMode::kChunkLevel);
  options.max_chunk_transfers = 47;
  EXPECT_EQ(Simulate(ring, net, options).mode, SimMode::kFlowLevel);
}

TEST(Simulator, RejectsBadInput) {
  NetworkModel net = OneSwitch(3, kBps);
  const Plan plan = FromPlanner("flat", net, 4 * kChunk, kChunk);
  SimOptions options;
  options.window_chunks = 0;
  EXPECT_EQ(SimulatePlan(plan, net, options).status().code(), StatusCode::kInvalidArgument);
  options = SimOptions{};
  options.goodput_factor = 0;
  EXPECT_EQ(SimulatePlan(plan, net, options).status().code(), StatusCode::kInvalidArgument);
  options = SimOptions{};
  options.per_message_overhead_s = -1;
  EXPECT_EQ(SimulatePlan(plan, net, options).status().code(), StatusCode::kInvalidArgument);
  Plan stranger = plan;
  stranger.members[2] = "elsewhere";
  EXPECT_EQ(SimulatePlan(stranger, net, {}).status().code(), StatusCode::kInvalidArgument);
  Plan no_lanes = plan;
  no_lanes.lanes.clear();
  EXPECT_EQ(SimulatePlan(no_lanes, net, {}).status().code(), StatusCode::kInvalidArgument);
  net.nodes[2].down_bps = 0;
  const Result<SimResult> zero = SimulatePlan(plan, net, {});
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("n2"), std::string::npos) << zero.status().message();
}

TEST(Simulator, UnshapedNetworkCostsOnlyDelays) {
  NetworkModel net = SwitchPerNode(3, 0.001);
  for (Node& node : net.nodes) node.up_bps = node.down_bps = kUnshaped;
  // One chunk over two hops of 2 ms each.
  const Plan one = FromPlanner("chain", net, kChunk, kChunk);
  for (SimMode mode : {SimMode::kChunkLevel, SimMode::kFlowLevel}) {
    EXPECT_NEAR(Simulate(one, net, Mode(mode)).completion_s, 2 * 0.002, 1e-12);
  }
  // Eight chunks with four in flight per edge: each edge needs two rounds of 2 ms, and the
  // second hop's second round starts when the first hop's ends: 3 rounds in all.
  const Plan eight = FromPlanner("chain", net, 8 * kChunk, kChunk);
  EXPECT_NEAR(Simulate(eight, net, Mode(SimMode::kChunkLevel)).completion_s, 3 * 0.002, 1e-12);
}

// Both engines on many small plans: every registered planner and the hand-made plans, on a
// homogeneous switch, a switch of mixed NICs and two sites behind unequal uplinks. They agree
// within 3% on all of them, the short lanes over long paths of the scatter plans included
// (9-chunk lanes over 9 hops, which the flow level steps chunk by chunk), and count the same
// bytes on every link.
TEST(Simulator, FlowLevelAgreesWithChunkLevel) {
  const uint64_t chunk = 128 << 10;
  const uint64_t payload = 80 * chunk - 1000;
  double worst = 0;
  for (int p : {2, 5, 10}) {
    NetworkModel mixed = OneSwitch(p, kBps);
    for (int v = 0; v < p; ++v) {
      mixed.nodes[v].up_bps = v % 3 == 1 ? 30e6 : 100e6;
      mixed.nodes[v].down_bps = v % 2 == 1 ? 200e6 : 100e6;
    }
    mixed.name = "mixed";
    const std::vector<NetworkModel> nets = {OneSwitch(p, kBps), mixed,
                                            TwoSites(p / 2 + 1, p - p / 2 - 1, kBps, 400e6, 50e6, 0.005)};
    for (const NetworkModel& net : nets) {
      std::vector<Plan> plans = {BinaryTreePlan(net, payload, chunk), TwoTreesPlan(net, payload, chunk),
                                 ScatterRingPlan(net, payload, chunk)};
      for (const PlannerInfo& info : ListPlanners()) {
        if (info.kind != PlannerKind::kSwarm) plans.push_back(FromPlanner(info.name, net, payload, chunk));
      }
      for (const Plan& plan : plans) {
        const SimResult exact = Simulate(plan, net, Mode(SimMode::kChunkLevel));
        const SimResult fast = Simulate(plan, net, Mode(SimMode::kFlowLevel));
        const double error = std::abs(fast.completion_s / exact.completion_s - 1);
        worst = std::max(worst, error);
        EXPECT_LE(error, 0.03)
            << plan.algorithm << " on " << net.name << ", p = " << p << ": chunk " << exact.completion_s
            << " s, flow " << fast.completion_s << " s";
        EXPECT_EQ(fast.node_sent_bytes, exact.node_sent_bytes) << plan.algorithm;
        EXPECT_EQ(fast.node_received_bytes, exact.node_received_bytes) << plan.algorithm;
        EXPECT_EQ(fast.uplink_up_bytes, exact.uplink_up_bytes) << plan.algorithm;
        EXPECT_EQ(fast.uplink_down_bytes, exact.uplink_down_bytes) << plan.algorithm;
      }
    }
  }
  std::printf("flow vs chunk, worst relative error: %.4f\n", worst);
}

// Merging events (flow_merge_fraction, what `auto` uses above 256 members) trades precision
// for speed but must never make a plan faster: before merged events were charged their time,
// a chain of 300 members at 4096 chunks was predicted at a quarter of the physical bound
// (21 s against 86 s) and `auto` chose chain at scale.
TEST(Simulator, MergedEventsNeverSpeedUpAPlan) {
  const NetworkModel net = OneSwitch(300, kBps);
  const uint64_t payload = uint64_t{1} << 30;
  const double bound_s = payload / kBytesPerS;
  for (const char* name : {"chain", "multilane", "binomial"}) {
    const Plan plan = FromPlanner(name, net, payload, 256 << 10);
    SimOptions exact = Mode(SimMode::kFlowLevel);
    exact.per_message_overhead_s = 50e-6;
    SimOptions merged = exact;
    merged.flow_merge_fraction = 1e-3;
    const double exact_s = Simulate(plan, net, exact).completion_s;
    const double merged_s = Simulate(plan, net, merged).completion_s;
    EXPECT_GE(exact_s, bound_s) << name;
    EXPECT_GE(merged_s, bound_s) << name;
    EXPECT_NEAR(merged_s / exact_s, 1.0, 0.01) << name << ": exact " << exact_s << " s, merged " << merged_s << " s";
  }
}

// PlanLowerBoundSeconds never exceeds what either engine predicts, for every broadcast planner
// on networks with unequal NICs, uplinks and latency, with and without per-chunk work; and it
// rules out a long chain by its pipeline alone.
TEST(Simulator, LowerBoundNeverExceedsTheSimulation) {
  const uint64_t chunk = 128 << 10;
  const uint64_t payload = 40 * chunk - 1000;
  for (int p : {2, 7, 12}) {
    NetworkModel mixed = OneSwitch(p, kBps);
    for (int v = 0; v < p; ++v) {
      mixed.nodes[v].up_bps = v % 3 == 1 ? 30e6 : 100e6;
      mixed.nodes[v].down_bps = v % 2 == 1 ? 200e6 : 100e6;
    }
    const std::vector<NetworkModel> nets = {mixed, TwoSites(p / 2 + 1, p - p / 2 - 1, kBps, 400e6, 50e6, 0.005),
                                            SwitchPerNode(p, 0.002)};
    for (const NetworkModel& net : nets) {
      for (const PlannerInfo& info : ListPlanners()) {
        if (info.kind != PlannerKind::kBroadcast || info.name == "auto") continue;
        const Plan plan = FromPlanner(info.name, net, payload, chunk);
        for (double overhead : {0.0, 50e-6}) {
          for (SimMode mode : {SimMode::kChunkLevel, SimMode::kFlowLevel}) {
            SimOptions options = Mode(mode);
            options.per_message_overhead_s = overhead;
            Result<double> bound = PlanLowerBoundSeconds(plan, net, options);
            ASSERT_TRUE(bound.ok()) << bound.status().ToString();
            const double simulated = Simulate(plan, net, options).completion_s;
            EXPECT_LE(*bound, simulated * (1 + 1e-9))
                << info.name << " on " << net.name << ", p = " << p << ", overhead " << overhead;
            EXPECT_GT(*bound, 0) << info.name;
          }
        }
      }
    }
  }
  const NetworkModel flat = OneSwitch(300, kBps);
  const Plan chain = FromPlanner("chain", flat, uint64_t{1} << 30, 256 << 10);
  // 1 GiB through the first hop (85.9 s) plus 298 more hops of a 256 KiB chunk (21 ms each).
  EXPECT_NEAR(*PlanLowerBoundSeconds(chain, flat, SimOptions{}), 85.90 + 298 * 0.02097, 0.1);
}

// Streams weigh an edge's share of a shared bottleneck only, so one stream count on every
// edge changes no rate in either engine: auto predicts such a plan once (auto_planner.cc,
// PredictedAlike) instead of again at 2 and 4 streams.
TEST(Simulator, OneStreamCountOnEveryEdgeChangesNoRate) {
  const NetworkModel net = TwoSites(5, 6, kBps, 400e6, 50e6, 0.005);
  const Plan one = FromPlanner("multilane-sites", net, 40 * kChunk, kChunk / 4);
  for (int streams : {2, 4}) {
    Plan many = one;
    for (Lane& lane : many.lanes) {
      lane.streams = streams;
      for (Fanout& fanout : lane.fanouts) fanout.streams.assign(fanout.children.size(), streams);
    }
    for (SimMode mode : {SimMode::kChunkLevel, SimMode::kFlowLevel}) {
      EXPECT_EQ(Simulate(many, net, Mode(mode)).completion_s, Simulate(one, net, Mode(mode)).completion_s)
          << streams << " streams";
    }
  }
}

// A chain whose slowest hop is not its first: the lane's bytes cross the 50mbit uplink after
// the first chunk has come two hops (at 100mbit), and its last chunk then has 99 hops to go.
// The bound counts all three (the first hop alone gave 64 MiB / 100mbit + 101 hops = 13.8 s,
// below the uplink's own 10.7 s plus the hops after it); the simulation takes longer still.
TEST(Simulator, LowerBoundCountsTheSlowestHopOfAPath) {
  const NetworkModel net = TwoSites(3, 100, kBps, 400e6, 50e6, 0);
  const Plan chain = FromPlanner("chain", net, 64 * kChunk, kChunk);
  const double hop_s = kChunk / kBytesPerS;  // one chunk at 100mbit
  const double uplink_s = 64 * kChunk / (50e6 / 8);
  Result<double> bound = PlanLowerBoundSeconds(chain, net, SimOptions{});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_NEAR(*bound, 2 * hop_s + uplink_s + 99 * hop_s, 1e-6);
  EXPECT_LE(*bound, Simulate(chain, net, Mode(SimMode::kFlowLevel)).completion_s * (1 + 1e-9));
}

// Planned lane rates: the lanes end together at the busiest link's time, which no bound
// undercuts; on one switch splitstream:2's two lanes each get half the source's upload.
TEST(Simulator, PlannedLaneRatesEndTheLanesTogether) {
  const uint64_t chunk = 128 << 10;
  for (const NetworkModel& net : {OneSwitch(16, 50e6), TwoSites(5, 6, kBps, 400e6, 50e6, 0.005)}) {
    for (const PlannerInfo& info : ListPlanners()) {
      if (info.kind != PlannerKind::kBroadcast || info.name == "auto") continue;
      Plan plan = FromPlanner(info.name, net, 40 * chunk - 1000, chunk);
      ASSERT_TRUE(SetPlannedLaneRates(plan, net).ok()) << info.name;
      ASSERT_TRUE(ValidatePlan(plan).ok()) << info.name;
      std::optional<double> ends_s;
      for (size_t l = 0; l < plan.lanes.size(); ++l) {
        const double bytes = static_cast<double>(plan.LaneBytes(static_cast<int>(l)));
        if (bytes == 0) continue;
        ASSERT_GT(plan.lanes[l].planned_bps, 0) << info.name << " lane " << l;
        const double lane_ends_s = 8 * bytes / plan.lanes[l].planned_bps;
        if (!ends_s) ends_s = lane_ends_s;
        EXPECT_NEAR(lane_ends_s, *ends_s, 1e-9 * *ends_s) << info.name << " lane " << l;
      }
      ASSERT_TRUE(ends_s.has_value()) << info.name;
      EXPECT_LE(*ends_s, *PlanLowerBoundSeconds(plan, net, SimOptions{}) * (1 + 1e-9)) << info.name;
    }
  }
  Plan split = FromPlanner("splitstream:2", OneSwitch(16, 50e6), 64 * chunk, chunk);
  ASSERT_TRUE(SetPlannedLaneRates(split, OneSwitch(16, 50e6)).ok());
  ASSERT_EQ(split.lanes.size(), 2u);
  EXPECT_NEAR(split.lanes[0].planned_bps, 25e6, 1);
  EXPECT_NEAR(split.lanes[1].planned_bps, 25e6, 1);
}

}  // namespace
}  // namespace gridcast
