// [A2A] equations 2-10 (algorithms.md 4.2-4.5) with α=1, β=2, β_em=3, γ=5, δ=7, C=11, L=13,
// m=1, expected values computed by hand; and the Lemieux parameters against [A2A] Table 1.
#include "collectives/models/alltoall_costs.h"

#include <gtest/gtest.h>

namespace gridcast::models {
namespace {

A2AParams Units() {
  A2AParams a;
  a.alpha_s = 1;
  a.beta_s_per_byte = 2;
  a.beta_em_s_per_byte = 3;
  a.gamma_s_per_byte = 5;
  a.delta_s_per_byte = 7;
  a.contention_s_per_byte = 11;
  a.latency_s = 13;
  return a;
}

TEST(AllToAllCosts, ClosedForms) {
  const A2AParams a = Units();
  EXPECT_DOUBLE_EQ(*A2ADirectSeconds(a, 16, 1), 223);               // 15 + 15·13 + 13
  EXPECT_DOUBLE_EQ(*A2AMeshSeconds(a, 16, 1), 353);                 // 8 + 16·19 + 4·7 + 13
  EXPECT_DOUBLE_EQ(*A2AMeshSeconds(a, 14, 1), 315);                 // 4×4 mesh with 2 holes
  EXPECT_DOUBLE_EQ(*A2AHypercubeSeconds(a, 16, 1), 274);            // 4 + 15·18
  EXPECT_DOUBLE_EQ(*A2AHypercubeExtraNodesSeconds(a, 16, 1), 199);  // 4 + 15·13
  EXPECT_DOUBLE_EQ(*A2AHypercubeExtraNodesSeconds(a, 18, 1), 447);  // 5 + 2·17·13
  EXPECT_DOUBLE_EQ(*A2AHybridSeconds(a, 16, 3, 1), 74);             // 4 + 2·14 + 14·3
  EXPECT_DOUBLE_EQ(*A2ARingSeconds(a, 16, 1), 58);                  // 15·3 + 13
  EXPECT_DOUBLE_EQ(*A2APrefixSendSeconds(a, 16, 1), 80);            // 15·4 + 7 + 13
  EXPECT_DOUBLE_EQ(*A2AKPrefixSeconds(a, 16, 4, 1), 101);           // 60 + 4·7 + 13
  EXPECT_DOUBLE_EQ(*A2AKPrefixSeconds(a, 24, 8, 1), 126);           // 92 + 3·7 + 13
  EXPECT_DOUBLE_EQ(*A2AKShiftSeconds(a, 24, 3, 1), 161);            // 92 + 8·7 + 13
  // Hybrid with ζ = 0 is the hypercube from main memory plus the NIC copy, without C.
  EXPECT_DOUBLE_EQ(*A2AHybridSeconds(a, 16, 0, 1), 4 + 16 * 14);
}

TEST(AllToAllCosts, RejectsUnsupportedSizes) {
  const A2AParams a = Units();
  EXPECT_FALSE(A2AHypercubeSeconds(a, 18, 1).ok());
  EXPECT_FALSE(A2APrefixSendSeconds(a, 24, 1).ok());
  EXPECT_FALSE(A2AKPrefixSeconds(a, 24, 3, 1).ok());  // k not a power of two
  EXPECT_FALSE(A2AKShiftSeconds(a, 20, 8, 1).ok());   // p not a multiple of k
  EXPECT_FALSE(A2AHybridSeconds(a, 16, 5, 1).ok());
  EXPECT_FALSE(A2ADirectSeconds(a, 0, 1).ok());
  EXPECT_FALSE(A2AEffectiveBandwidthBps(4, 1, 0).ok());
}

// [A2A] 2: 1/β gives ≈128 MB/s each way (256 MB/s effective), 1/β_em ≈ 305 each way
// (610 MB/s effective).
TEST(AllToAllCosts, LemieuxParametersMatchTheMeasuredBandwidths) {
  const A2AParams lemieux = LemieuxA2AParams();
  EXPECT_NEAR(2 / lemieux.beta_s_per_byte / 256e6, 1, 0.05);
  EXPECT_NEAR(2 / lemieux.beta_em_s_per_byte / 610e6, 1, 0.05);
}

// [A2A] Table 1 (256 KB messages, no holes) measured effective bandwidths. The model with C = 0
// and L = 0 is contention- and distance-free, so it must bound every measurement from above;
// kPrefix, which avoids both, comes within 11 %.
TEST(AllToAllCosts, ContentionFreeModelBoundsTableOne) {
  const A2AParams lemieux = LemieuxA2AParams();
  constexpr double m = 256 * 1024;
  struct Row {
    int nodes;
    double kshift_MBps, kprefix_MBps, prefix_MBps;  // 0 = not measured
  };
  const Row rows[] = {{64, 507, 531, 520},
                      {128, 432, 519, 428},
                      {144, 433, 521, 0},
                      {192, 416, 516, 0},
                      {256, 405, 511, 429}};
  for (const Row& row : rows) {
    SCOPED_TRACE(row.nodes);
    const double kprefix =
        *A2AEffectiveBandwidthBps(row.nodes, m, *A2AKPrefixSeconds(lemieux, row.nodes, 8, m));
    const double kshift =
        *A2AEffectiveBandwidthBps(row.nodes, m, *A2AKShiftSeconds(lemieux, row.nodes, 8, m));
    EXPECT_GT(kprefix, row.kprefix_MBps * 1e6);
    EXPECT_LT(kprefix, row.kprefix_MBps * 1e6 * 1.11);
    EXPECT_GT(kshift, row.kshift_MBps * 1e6);
    if (row.prefix_MBps > 0) {
      const double prefix =
          *A2AEffectiveBandwidthBps(row.nodes, m, *A2APrefixSendSeconds(lemieux, row.nodes, m));
      EXPECT_GT(prefix, row.prefix_MBps * 1e6);
    }
  }
  // The ring cannot send from NIC memory: about 266 MB/s at any size, near native MPI.
  EXPECT_NEAR(*A2AEffectiveBandwidthBps(64, m, *A2ARingSeconds(lemieux, 64, m)), 265.67e6, 0.01e6);
}

}  // namespace
}  // namespace gridcast::models
