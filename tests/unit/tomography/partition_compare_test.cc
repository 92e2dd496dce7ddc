// ARI and NMI against scikit-learn's documented values and hand computations; the stability
// rule for `--runs auto`.
#include "tomography/partition_compare.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

TEST(PartitionCompareTest, AdjustedRandIndexKnownValues) {
  EXPECT_DOUBLE_EQ(AdjustedRandIndex({0, 0, 1, 1}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(AdjustedRandIndex({0, 0, 1, 1}, {1, 1, 0, 0}), 1.0);
  EXPECT_DOUBLE_EQ(AdjustedRandIndex({0, 0, 1, 1}, {0, 1, 0, 1}), -0.5);
  EXPECT_NEAR(AdjustedRandIndex({0, 0, 1, 2}, {0, 0, 1, 1}), 0.5714285714285714,
              1e-12);  // sklearn docs
  EXPECT_NEAR(AdjustedRandIndex({0, 0, 1, 1}, {0, 0, 1, 2}), 0.5714285714285714, 1e-12);
  EXPECT_DOUBLE_EQ(AdjustedRandIndex({0, 0, 0, 0}, {0, 1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(AdjustedRandIndex({0, 0, 0}, {5, 5, 5}), 1.0);  // both trivial alike
  EXPECT_DOUBLE_EQ(AdjustedRandIndex({0, 1, 2}, {2, 0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(AdjustedRandIndex(std::vector<int>{}, std::vector<int>{}), 1.0);
}

TEST(PartitionCompareTest, NormalizedMutualInformationKnownValues) {
  EXPECT_NEAR(NormalizedMutualInformation({0, 0, 1, 1}, {0, 0, 1, 1}), 1.0, 1e-12);
  EXPECT_NEAR(NormalizedMutualInformation({0, 0, 1, 1}, {1, 1, 0, 0}), 1.0, 1e-12);
  EXPECT_NEAR(NormalizedMutualInformation({0, 0, 1, 1}, {0, 1, 0, 1}), 0.0, 1e-12);  // independent
  EXPECT_NEAR(NormalizedMutualInformation({0, 0, 0, 0}, {0, 1, 2, 3}), 0.0, 1e-12);
  // H(a) = 1.5 ln 2, H(b) = ln 2, MI = ln 2: arithmetic mean gives 1 / 1.25.
  EXPECT_NEAR(NormalizedMutualInformation({0, 0, 1, 2}, {0, 0, 1, 1}), 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(NormalizedMutualInformation({3, 3}, {1, 1}), 1.0);
}

TEST(PartitionCompareTest, NamedPartitions) {
  const Partition a{{{"x", "y"}, {"z", "w"}}};
  const Partition b{{{"w", "z"}, {"y", "x"}}};
  EXPECT_DOUBLE_EQ(*AdjustedRandIndex(a, b), 1.0);
  EXPECT_NEAR(*NormalizedMutualInformation(a, b), 1.0, 1e-12);
  EXPECT_EQ(Canonical(a), Canonical(b));
  EXPECT_EQ(Canonical(Partition{{{"q"}, {"c", "b"}, {}, {"a"}}}),
            (Partition{{{"b", "c"}, {"a"}, {"q"}}}));
  const Partition other{{{"x", "y", "z"}, {"v"}}};
  EXPECT_NE(AdjustedRandIndex(a, other).status().message().find("different nodes"),
            std::string::npos);
  const Partition twice{{{"x", "y"}, {"y"}}};
  EXPECT_NE(AdjustedRandIndex(twice, a).status().message().find("'y' appears twice"),
            std::string::npos);
}

TEST(PartitionCompareTest, StabilityNeedsThreeIdenticalPartitions) {
  const Partition p{{{"a", "b"}, {"c", "d"}}};
  const Partition q{{{"a", "b", "c"}, {"d"}}};
  const Partition p_again{{{"d", "c"}, {"b", "a"}}};
  EXPECT_FALSE(PartitionStable({p, p}));
  EXPECT_NE(PartitionStability({p, p}).reason.find("2 runs"), std::string::npos);
  EXPECT_TRUE(PartitionStable({p, p, p_again}));
  EXPECT_TRUE(PartitionStable({q, p, p, p}));
  const StabilityDecision changed = PartitionStability({p, p, q});
  EXPECT_FALSE(changed.stable);
  EXPECT_NE(changed.reason.find("after runs 1 and 3: ARI"), std::string::npos) << changed.reason;
  const Partition fewer{{{"a", "b"}, {"c"}}};
  EXPECT_NE(PartitionStability({p, p, fewer}).reason.find("different nodes"), std::string::npos);
  EXPECT_TRUE(PartitionStable({p, p}, 2));
}

}  // namespace
}  // namespace gridcast
