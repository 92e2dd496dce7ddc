// Every registered planner, on several topologies, member counts and payload sizes, makes a
// Plan that validates and delivers every chunk to every member exactly once. Registering a
// planner is enough to have it tested here.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <string>

#include "collectives/registry.h"
#include "collectives/topology.h"
#include "collectives/validate_plan.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunk = 1 << 16;

NetworkModel Flat(int p) {
  NetworkModel net;
  net.name = "flat";
  net.switches.push_back({"core", -1});
  for (int i = 0; i < p; ++i) net.nodes.push_back({"n" + std::to_string(i), 0, 100e6, 100e6});
  return net;
}

// Three sites under a core, unequal sizes and rates, source in the middle site.
NetworkModel Sites(int p) {
  NetworkModel net;
  net.name = "sites";
  net.switches = {{"core", -1}, {"a", 0, 400e6, 400e6, 0.005}, {"b", 0, 50e6, 50e6, 0.01},
                  {"c", 0, 100e6, 100e6, 0.002}, {"c-rack", 3, 200e6, 200e6, 0}};
  for (int i = 0; i < p; ++i) {
    const int site = 1 + (i % 7 < 3 ? 0 : i % 7 < 5 ? 1 : i % 7 < 6 ? 2 : 3);  // a, b, c, c-rack
    net.nodes.push_back({"n" + std::to_string(i), site, i % 3 == 0 ? 300e6 : 100e6, 100e6});
  }
  net.source = p / 2;
  return net;
}

// Independent of ValidatePlan: walk each chunk down its lane and count deliveries.
void ExpectEveryChunkOnceEverywhere(const Plan& plan) {
  const int p = static_cast<int>(plan.members.size());
  const uint64_t n = plan.NumChunks();
  std::vector<std::vector<int>> received(p, std::vector<int>(n, 0));
  for (const Lane& lane : plan.lanes) {
    for (uint64_t c = 0; c < n; ++c) {
      if (!lane.Carries(c)) continue;
      received[lane.source][c] += 1;  // the source holds it
      std::vector<int> frontier = {lane.source};
      int steps = 0;
      while (!frontier.empty() && ++steps <= p + 1) {
        std::vector<int> next;
        for (int v : frontier) {
          for (const Fanout& f : lane.fanouts) {
            if (f.parent != v) continue;
            for (int child : f.children) {
              received[child][c] += 1;
              next.push_back(child);
            }
          }
        }
        frontier = std::move(next);
      }
    }
  }
  for (int m = 0; m < p; ++m) {
    for (uint64_t c = 0; c < n; ++c) {
      ASSERT_EQ(received[m][c], 1) << plan.algorithm << ": member " << plan.members[m]
                                   << " chunk " << c;
    }
  }
}

struct Case {
  std::string planner;
  std::string topology;
  int p;
};

class PlannerInvariants : public ::testing::TestWithParam<Case> {};

TEST_P(PlannerInvariants, ValidAndComplete) {
  const Case& c = GetParam();
  NetworkModel net = c.topology == "flat" ? Flat(c.p) : Sites(c.p);
  Result<std::unique_ptr<Planner>> planner = MakePlanner(c.planner);
  ASSERT_TRUE(planner.ok()) << planner.status().ToString();
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, kChunk - 1, kChunk + 1, 37 * kChunk + 5}) {
    PlanOptions options;
    options.chunk_bytes = kChunk;
    Result<Plan> plan = (*planner)->MakePlan(net, size, options);
    ASSERT_TRUE(plan.ok()) << c.planner << " p=" << c.p << " size=" << size << ": "
                           << plan.status().ToString();
    Status valid = ValidatePlanOn(*plan, net);
    ASSERT_TRUE(valid.ok()) << c.planner << " p=" << c.p << " size=" << size << ": "
                            << valid.ToString();
    ASSERT_EQ(plan->members.size(), static_cast<size_t>(c.p));
    ASSERT_EQ(plan->payload_bytes, size);
    if (c.p <= 40 || size <= kChunk + 1) ExpectEveryChunkOnceEverywhere(*plan);
  }
  // A subset of members, with the source named explicitly.
  if (c.p >= 3) {
    PlanOptions options;
    options.chunk_bytes = kChunk;
    options.source = 1;
    for (int i = 0; i < c.p; i += 2) options.members.push_back(i);
    Result<Plan> plan = (*planner)->MakePlan(net, 9 * kChunk, options);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_TRUE(ValidatePlanOn(*plan, net).ok()) << ValidatePlanOn(*plan, net).ToString();
    EXPECT_EQ(plan->members[0], net.nodes[1].name);
    ExpectEveryChunkOnceEverywhere(*plan);
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind == PlannerKind::kSwarm) continue;  // no trees; swarm_test.cc covers them
    for (int p = 1; p <= 70; ++p) cases.push_back({info.name, "flat", p});
    for (int p : {127, 128, 255, 1000}) cases.push_back({info.name, "flat", p});
    for (int p : {1, 2, 3, 5, 8, 16, 17, 31, 64}) cases.push_back({info.name, "sites", p});
  }
  return cases;
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.planner + "_" + info.param.topology + "_" + std::to_string(info.param.p);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllPlanners, PlannerInvariants, ::testing::ValuesIn(AllCases()), CaseName);

TEST(Registry, NamesAndParameters) {
  EXPECT_TRUE(MakePlanner("chain").ok());
  EXPECT_EQ(MakePlanner("nope").status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(MakePlanner("nope").status().message().find("known: "), std::string::npos);
  EXPECT_FALSE(MakePlanner("chain:3").ok());
  for (const PlannerInfo& info : ListPlanners()) {
    Result<std::unique_ptr<Planner>> planner = MakePlanner(info.name);
    ASSERT_TRUE(planner.ok()) << info.name;
    EXPECT_EQ((*planner)->name(), info.name);
  }
}

// The chunk size callers use when the user names none: a power of two a BitTorrent piece can
// be (hybrid and pull plans share chunks with a swarm), and a plan made with it validates.
TEST(DefaultChunkBytes, EveryPlannerPowerOfTwoPieceAndValidPlan) {
  const NetworkModel net = Flat(16);
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind == PlannerKind::kAllToAll) continue;
    Result<std::unique_ptr<Planner>> planner = MakePlanner(info.name);
    ASSERT_TRUE(planner.ok()) << info.name;
    for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{3} << 20, uint64_t{256} << 20, uint64_t{1} << 40}) {
      const uint64_t chunk = (*planner)->DefaultChunkBytes(size);
      EXPECT_TRUE(std::has_single_bit(chunk)) << info.name << " " << size;
      EXPECT_GE(chunk, 16u << 10) << info.name << " " << size;
      EXPECT_LE(chunk, 64u << 20) << info.name << " " << size;
      if (size > (1u << 30)) continue;  // planning a TiB in small chunks is slow, and covered above
      PlanOptions options;
      options.chunk_bytes = chunk;
      Result<Plan> plan = (*planner)->MakePlan(net, size, options);
      ASSERT_TRUE(plan.ok()) << info.name << " " << size << ": " << plan.status().ToString();
      EXPECT_TRUE(ValidatePlanOn(*plan, net).ok()) << info.name << " " << size;
    }
  }
}

TEST(DefaultChunkBytes, PushPlansCutAbout2048Chunks) {
  Result<std::unique_ptr<Planner>> multilane = MakePlanner("multilane");
  ASSERT_TRUE(multilane.ok());
  EXPECT_EQ((*multilane)->DefaultChunkBytes(0), 64u << 10);
  EXPECT_EQ((*multilane)->DefaultChunkBytes(128u << 20), 64u << 10);
  EXPECT_EQ((*multilane)->DefaultChunkBytes((128u << 20) + 1), 128u << 10);
  EXPECT_EQ((*multilane)->DefaultChunkBytes(256u << 20), 128u << 10);
  EXPECT_EQ((*multilane)->DefaultChunkBytes(1u << 30), 512u << 10);
  EXPECT_EQ((*multilane)->DefaultChunkBytes(uint64_t{8} << 30), 4u << 20);
  EXPECT_EQ((*multilane)->DefaultChunkBytes(uint64_t{1} << 40), 4u << 20);
  // auto's is only the first guess of its search.
  EXPECT_EQ((*MakePlanner("auto"))->DefaultChunkBytes(256u << 20), 1u << 20);
}

// Payloads of any size plan within the chunk count a member can hold: the defaults grow with
// the payload, auto searches no smaller chunk than the count allows, and a chunk too small is
// refused naming the smallest that fits.
TEST(ChunkCount, DefaultsAndAutoStayWithinTheBoundAtAnySize) {
  constexpr uint64_t kTiB = uint64_t{1} << 40;
  constexpr uint64_t kPiB = uint64_t{1} << 50;
  EXPECT_EQ(SmallestChunkBytes(kTiB, false), 1u << 10);
  EXPECT_EQ(SmallestChunkBytes(8 * kTiB, false), 8u << 10);
  EXPECT_EQ(SmallestChunkBytes(100 * kTiB, false), 128u << 10);
  EXPECT_EQ(SmallestChunkBytes(4 * kPiB, false), 4u << 20);
  EXPECT_EQ(SmallestChunkBytes(0, false), 1u);
  EXPECT_EQ(SmallestChunkBytes(100, true), 16u << 10);
  EXPECT_EQ(SmallestChunkBytes(100 * kTiB, true), 64u << 20);
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind == PlannerKind::kAllToAll) continue;
    Result<std::unique_ptr<Planner>> planner = MakePlanner(info.name);
    ASSERT_TRUE(planner.ok()) << info.name;
    for (uint64_t size : {8 * kTiB, 100 * kTiB, 4 * kPiB}) {
      const uint64_t chunk = (*planner)->DefaultChunkBytes(size);
      EXPECT_TRUE(CheckChunkCount(size, chunk, /*swarm=*/false).ok()) << info.name << " " << size;
    }
  }
  Result<std::unique_ptr<Planner>> swarm = MakePlanner("swarm");
  ASSERT_TRUE(swarm.ok());
  EXPECT_TRUE(CheckChunkCount(100 * kTiB, (*swarm)->DefaultChunkBytes(100 * kTiB), /*swarm=*/true).ok());

  // auto at 4 PiB: without the bound it would choose 256 KiB (2^34 chunks).
  Result<std::unique_ptr<Planner>> automatic = MakePlanner("auto");
  ASSERT_TRUE(automatic.ok());
  const NetworkModel net = Flat(16);
  PlanOptions options;
  options.choose_chunk_bytes = true;
  options.min_chunk_bytes = SmallestChunkBytes(4 * kPiB, false);
  options.chunk_bytes = std::max((*automatic)->DefaultChunkBytes(4 * kPiB), options.min_chunk_bytes);
  Result<Plan> plan = (*automatic)->MakePlan(net, 4 * kPiB, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_LE(plan->NumChunks(), kMaxPlanChunks);
  EXPECT_TRUE(ValidatePlanOn(*plan, net).ok());
}

TEST(ChunkCount, TooManyChunksAreRefusedNamingTheSmallestThatFits) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  EXPECT_TRUE(CheckChunkCount(1024 * kGiB, 1024, false).ok());  // exactly 2^30
  const Status push = CheckChunkCount(1024 * kGiB + 1, 1024, false);
  ASSERT_EQ(push.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(push.message().find("chunks of 2048 bytes or more fit"), std::string::npos) << push.message();
  const Status swarm = CheckChunkCount(64 * kGiB, 16 << 10, true);
  ASSERT_EQ(swarm.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(swarm.message().find("pieces"), std::string::npos) << swarm.message();
  EXPECT_NE(swarm.message().find("32768 bytes or more"), std::string::npos) << swarm.message();
  const Status huge = CheckChunkCount(uint64_t{200} << 40, 1 << 20, true);
  EXPECT_NE(huge.message().find("too large for a swarm"), std::string::npos) << huge.message();
  EXPECT_NE(CheckChunkCount(uint64_t{128} << 50, 1 << 20, false).message().find("even of 64 MiB"), std::string::npos);
  // ValidatePlan refuses such a plan too (a hand-made one: planners never make it).
  Plan plan;
  plan.members = {"a", "b"};
  plan.payload_bytes = 1024 * kGiB + 1;
  plan.chunk_bytes = 1024;
  EXPECT_NE(ValidatePlan(plan).message().find("more than 1073741824"), std::string::npos) << ValidatePlan(plan).message();
}

}  // namespace
}  // namespace gridcast
