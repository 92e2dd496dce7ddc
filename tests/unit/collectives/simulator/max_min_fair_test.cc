// Max-min fair sharing on examples small enough to solve by hand.
#include "collectives/simulator/max_min_fair.h"

#include <gtest/gtest.h>

#include <limits>

namespace gridcast {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MaxMinFair, ThreeFlowsTwoLinks) {
  // Link A (10) carries flows 0 and 1, link B (6) carries flows 1 and 2. B fills first at 3
  // each; flow 0 then takes what A has left: 10 - 3 = 7.
  FairShareProblem problem;
  problem.Clear(2);
  problem.capacity = {10, 6};
  problem.AddFlow({0}, 1, kInf, -1);
  problem.AddFlow({0, 1}, 1, kInf, -1);
  problem.AddFlow({1}, 1, kInf, -1);
  MaxMinFairSolver solver;
  const std::vector<double> rates = solver.Solve(problem);
  EXPECT_DOUBLE_EQ(rates[0], 7);
  EXPECT_DOUBLE_EQ(rates[1], 3);
  EXPECT_DOUBLE_EQ(rates[2], 3);
}

TEST(MaxMinFair, WeightsCapsAndFeeders) {
  // One link of 12: flow 0 weight 2, flow 1 weight 1 capped at 1, flow 2 weight 1.
  // Flow 1 stops at 1; the other 11 split 2:1.
  FairShareProblem problem;
  problem.Clear(2);
  problem.capacity = {12, kInf};
  problem.AddFlow({0}, 2, kInf, -1);
  problem.AddFlow({0}, 1, 1, -1);
  problem.AddFlow({0}, 1, kInf, -1);
  // Flow 3 crosses only the unshaped resource but is fed by flow 2: it gets flow 2's rate.
  problem.AddFlow({1}, 1, kInf, 2);
  // Flow 4 touches nothing finite and has no feeder: unbounded.
  problem.AddFlow({1}, 1, kInf, -1);
  MaxMinFairSolver solver;
  const std::vector<double> rates = solver.Solve(problem);
  EXPECT_DOUBLE_EQ(rates[0], 22.0 / 3);
  EXPECT_DOUBLE_EQ(rates[1], 1);
  EXPECT_DOUBLE_EQ(rates[2], 11.0 / 3);
  EXPECT_DOUBLE_EQ(rates[3], 11.0 / 3);
  EXPECT_EQ(rates[4], kInf);
}

TEST(MaxMinFair, FeederLimitFreesCapacityForOthers) {
  // Link 0 (2) feeds flow 0. Flows 1 (fed by 0) and 2 share link 1 (10): flow 1 cannot pass
  // flow 0's 2, so flow 2 gets 8.
  FairShareProblem problem;
  problem.Clear(2);
  problem.capacity = {2, 10};
  problem.AddFlow({0}, 1, kInf, -1);
  problem.AddFlow({1}, 1, kInf, 0);
  problem.AddFlow({1}, 1, kInf, -1);
  MaxMinFairSolver solver;
  const std::vector<double> rates = solver.Solve(problem);
  EXPECT_DOUBLE_EQ(rates[0], 2);
  EXPECT_DOUBLE_EQ(rates[1], 2);
  EXPECT_DOUBLE_EQ(rates[2], 8);
}

}  // namespace
}  // namespace gridcast
