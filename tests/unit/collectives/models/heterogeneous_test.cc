#include "collectives/models/heterogeneous.h"

#include <gtest/gtest.h>

#include "collectives/models/hockney.h"
#include "collectives/models/model_math.h"

namespace gridcast::models {
namespace {

TEST(Heterogeneous, BinomialTreeShape) {
  Result<BroadcastTree> tree = BinomialBroadcastTree(6);
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->children[0], (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(tree->children[1], (std::vector<int>{3, 5}));
  EXPECT_EQ(tree->children[2], (std::vector<int>{}));
}

// With constant costs only at the sender the predictor is ⌈log p⌉·S for every p, and with the
// whole cost per hop it is Hockney's ⌈log p⌉·(α + βm) for powers of two.
TEST(Heterogeneous, HomogeneousReducesToTheBinomialFormulas) {
  for (int p = 1; p <= 70; ++p) {
    const BroadcastTree tree = *BinomialBroadcastTree(p);
    std::vector<HeteroNodeParams> nodes(p, {0.5, 0, 0, 0});
    EXPECT_DOUBLE_EQ(*HeteroTreeBroadcastSeconds(tree, nodes, {}, 1000), 0.5 * CeilLog2(p)) << p;
  }
  for (int p : {2, 8, 64}) {
    std::vector<HeteroNodeParams> nodes(p, {1e-6, 1e-9, 2e-6, 3e-9});
    const double predicted =
        *HeteroTreeBroadcastSeconds(*BinomialBroadcastTree(p), nodes, {4e-6, 5e-9}, 1e4);
    // α = 1 + 4 + 2 µs, β = 1 + 5 + 3 ns/B.
    EXPECT_DOUBLE_EQ(predicted, *HockneyBinomialBroadcastSeconds({7e-6, 9e-9}, p, 1e4)) << p;
  }
}

// Hand-computed: 0 -> {1, 2}, 1 -> {3}, m = 10 bytes.
TEST(Heterogeneous, MaxOverPathsDependsOnSendOrder) {
  std::vector<HeteroNodeParams> nodes = {
      {1, 0.1, 0, 0}, {2, 0, 0.5, 0}, {0, 0, 0.25, 0}, {0, 0, 1, 0}};
  const HeteroNetworkParams network{0.3, 0.01};
  BroadcastTree tree{0, {{1, 2}, {3}, {}, {}}};
  // node1 = 2 + 0.4 + 0.5 = 2.9; node2 = 2·2 + 0.4 + 0.25 = 4.65; node3 = 2.9 + 2 + 0.4 + 1.
  EXPECT_DOUBLE_EQ(*HeteroTreeBroadcastSeconds(tree, nodes, network, 10), 6.3);
  tree.children[0] = {2, 1};  // node1 now second: 4.9, node3 = 8.3
  EXPECT_DOUBLE_EQ(*HeteroTreeBroadcastSeconds(tree, nodes, network, 10), 8.3);
  EXPECT_DOUBLE_EQ(*HeteroPointToPointSeconds(nodes[0], network, nodes[1], 10), 2.9);
}

TEST(Heterogeneous, RejectsBrokenTrees) {
  std::vector<HeteroNodeParams> nodes(3);
  EXPECT_FALSE(HeteroTreeBroadcastSeconds({0, {{1, 1}, {}, {}}}, nodes, {}, 1).ok());
  EXPECT_FALSE(HeteroTreeBroadcastSeconds({0, {{1}, {}, {}}}, nodes, {}, 1).ok());  // 2 unreached
  EXPECT_FALSE(HeteroTreeBroadcastSeconds({0, {{1}, {0}, {}}}, nodes, {}, 1).ok());
  EXPECT_FALSE(HeteroTreeBroadcastSeconds({0, {{5}, {}, {}}}, nodes, {}, 1).ok());
  EXPECT_FALSE(HeteroTreeBroadcastSeconds({0, {{1}, {2}}}, nodes, {}, 1).ok());
}

}  // namespace
}  // namespace gridcast::models
