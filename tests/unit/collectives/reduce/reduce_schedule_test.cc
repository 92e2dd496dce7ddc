#include "collectives/reduce/reduce_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "collectives/models/model_math.h"
#include "collectives/reduce/reduce_costs.h"

namespace gridcast::reduce {
namespace {

constexpr int64_t kNoHalving = int64_t{1} << 40;

// Runs `schedule` on per-process vectors, checking the one-port pairing and the activity flags
// on the way, and returns the final vectors. A send reads the values held at the start of the
// round.
template <typename T>
std::vector<std::vector<T>> Execute(const ReduceSchedule& schedule,
                                    std::vector<std::vector<T>> data,
                                    const std::function<T(const T&, const T&)>& op) {
  const int p = schedule.processes;
  std::vector<bool> active(p, true);
  for (size_t r = 0; r < schedule.rounds.size(); ++r) {
    const std::vector<ProcessStep>& steps = schedule.rounds[r].steps;
    EXPECT_EQ(static_cast<int>(steps.size()), p);
    std::vector<std::vector<T>> payload(p);
    for (int i = 0; i < p; ++i) {
      if (!steps[i].send) continue;
      const Outgoing& out = *steps[i].send;
      EXPECT_TRUE(active[i]) << "inactive rank " << i << " sends in round " << r;
      EXPECT_GE(out.to, 0);
      EXPECT_LT(out.to, p);
      EXPECT_NE(out.to, i);
      EXPECT_GE(out.range.begin, 0);
      EXPECT_LT(out.range.begin, out.range.end);
      EXPECT_LE(out.range.end, schedule.elements);
      const std::optional<Incoming>& in = steps[out.to].receive;
      EXPECT_TRUE(in && in->from == i && in->range == out.range)
          << "round " << r << ": send " << i << " -> " << out.to << " has no matching receive";
      payload[i].assign(data[i].begin() + out.range.begin, data[i].begin() + out.range.end);
    }
    for (int i = 0; i < p; ++i) {
      if (!steps[i].receive) continue;
      const Incoming& in = *steps[i].receive;
      EXPECT_TRUE(steps[in.from].send && steps[in.from].send->to == i)
          << "round " << r << ": receive at " << i << " has no matching send";
      if (in.merge == Merge::kStore) active[i] = true;
      for (int64_t e = in.range.begin; e < in.range.end; ++e) {
        const T& got = payload[in.from][e - in.range.begin];
        T& held = data[i][e];
        switch (in.merge) {
          case Merge::kStore:
            held = got;
            break;
          case Merge::kReceivedOnLeft:
            held = op(got, held);
            break;
          case Merge::kReceivedOnRight:
            held = op(held, got);
            break;
        }
      }
    }
    for (int i = 0; i < p; ++i) {
      if (!steps[i].active_after) active[i] = false;
      if (steps[i].active_after && !active[i])
        ADD_FAILURE() << "rank " << i << " reactivated without data";
    }
  }
  return data;
}

// A free, non-associative operation that records the bracketing: leaves are "r,", a combination
// is "(ab)". Removing the brackets exposes the operand order.
std::string Bracket(const std::string& a, const std::string& b) { return "(" + a + b + ")"; }

std::string RankOrder(int p) {
  std::string order;
  for (int r = 0; r < p; ++r) order += std::to_string(r) + ",";
  return order;
}

std::string StripBrackets(std::string s) {
  std::erase_if(s, [](char c) { return c == '(' || c == ')'; });
  return s;
}

// Runs the bracket-recording operation and checks the paper's three requirements on every
// process that must hold the result: the same value everywhere (1), operands in rank order (2)
// and one bracketing for every element (3).
void CheckBracketing(int p, int64_t elements, const ReduceOptions& options) {
  SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(elements) +
               " b=" + std::to_string(options.halving_threshold_elements));
  Result<ReduceSchedule> schedule = MakeReduceSchedule(p, elements, options);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  std::vector<std::vector<std::string>> data(p);
  for (int r = 0; r < p; ++r) data[r].assign(elements, std::to_string(r) + ",");
  const std::vector<std::vector<std::string>> out =
      Execute<std::string>(*schedule, std::move(data), Bracket);
  const std::string& reference = out[options.kind == ReduceKind::kReduce ? options.root : 0][0];
  EXPECT_EQ(StripBrackets(reference), RankOrder(p));
  for (int r = 0; r < p; ++r) {
    if (options.kind == ReduceKind::kReduce && r != options.root) continue;
    for (int64_t e = 0; e < elements; ++e)
      ASSERT_EQ(out[r][e], reference) << "rank " << r << " element " << e;
  }
}

// Sums distinct per-rank, per-element integers: checks every element's range bookkeeping.
void CheckSum(int p, int64_t elements, const ReduceOptions& options) {
  SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(elements));
  Result<ReduceSchedule> schedule = MakeReduceSchedule(p, elements, options);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  std::vector<std::vector<int64_t>> data(p, std::vector<int64_t>(elements));
  std::vector<int64_t> expected(elements, 0);
  for (int r = 0; r < p; ++r) {
    for (int64_t e = 0; e < elements; ++e) {
      data[r][e] = (r + 1) * 1000003 + e * 7919 + r * e;
      expected[e] += data[r][e];
    }
  }
  const auto out = Execute<int64_t>(*schedule, std::move(data), std::plus<int64_t>());
  for (int r = 0; r < p; ++r) {
    if (options.kind == ReduceKind::kReduce && r != options.root) continue;
    EXPECT_EQ(out[r], expected) << "rank " << r;
  }
}

void CheckAllreduceBracketing(int64_t threshold) {
  for (int p = 1; p <= 70; ++p) {
    for (int64_t elements : {1, 7, 16}) {
      CheckBracketing(p, elements, {ReduceKind::kAllreduce, 0, threshold});
    }
  }
}

TEST(ReduceSchedule, HalvingAllreduceKeepsRankOrderAndBracketingForEveryP) {
  CheckAllreduceBracketing(1);
  CheckAllreduceBracketing(3);
}

TEST(ReduceSchedule, WholeVectorAllreduceKeepsRankOrderAndBracketingForEveryP) {
  CheckAllreduceBracketing(kNoHalving);
}

TEST(ReduceSchedule, AllreduceSumsEveryElementForEveryP) {
  for (int p = 1; p <= 70; ++p) {
    for (int64_t threshold : {int64_t{1}, int64_t{2}, int64_t{5}, kNoHalving}) {
      for (int64_t elements : {1, 2, 3, 13, 64, 100}) {
        CheckSum(p, elements, {ReduceKind::kAllreduce, 0, threshold});
      }
    }
  }
}

TEST(ReduceSchedule, ReduceDeliversToAnyRoot) {
  for (int p = 1; p <= 70; ++p) {
    for (int root : {0, p / 2, p - 1}) {
      for (int64_t threshold : {int64_t{1}, kNoHalving}) {
        CheckBracketing(p, 11, {ReduceKind::kReduce, root, threshold});
        CheckSum(p, 37, {ReduceKind::kReduce, root, threshold});
      }
    }
  }
}

TEST(ReduceSchedule, AllreduceLeavesEveryProcessActive) {
  for (int p : {2, 3, 12, 13, 63}) {
    Result<ReduceSchedule> schedule = MakeReduceSchedule(p, 64, {});
    ASSERT_TRUE(schedule.ok());
    for (const ProcessStep& step : schedule->rounds.back().steps) EXPECT_TRUE(step.active_after);
  }
}

std::vector<std::vector<StepKind>> Kinds(const ReduceSchedule& schedule) {
  std::vector<std::vector<StepKind>> kinds;
  for (const ReduceRound& round : schedule.rounds) {
    kinds.emplace_back();
    for (const ProcessStep& step : round.steps) kinds.back().push_back(step.kind);
  }
  return kinds;
}

// algorithms.md 5.3: p = 8 with the threshold reached at the third round is R, R, A, N, G, G
// (the N round does nothing and is not emitted).
TEST(ReduceSchedule, PowerOfTwoExampleFromThePaper) {
  Result<ReduceSchedule> schedule = MakeReduceSchedule(8, 8, {ReduceKind::kAllreduce, 0, 2});
  ASSERT_TRUE(schedule.ok());
  const std::vector<StepKind> expected = {
      StepKind::kButterflyHalving, StepKind::kButterflyHalving, StepKind::kButterflyExchange,
      StepKind::kButterflyAllgather, StepKind::kButterflyAllgather};
  ASSERT_EQ(schedule->rounds.size(), expected.size());
  for (size_t r = 0; r < expected.size(); ++r) {
    for (const ProcessStep& step : schedule->rounds[r].steps)
      EXPECT_EQ(step.kind, expected[r]) << r;
  }
  // Round 1 partner is i ⊕ 1; the lower process keeps the first half.
  EXPECT_EQ(schedule->rounds[0].steps[2].send->to, 3);
  EXPECT_EQ(schedule->rounds[0].steps[2].send->range, (ElementRange{4, 8}));
  EXPECT_EQ(schedule->rounds[0].steps[2].receive->merge, Merge::kReceivedOnRight);
  EXPECT_EQ(schedule->rounds[0].steps[3].receive->merge, Merge::kReceivedOnLeft);
}

// algorithms.md 5.3, non-overlapping protocol for p = 13: triple 0-2, pairs 3-4 … 11-12; step 1
// the triple's first exchange beside the pair butterflies, step 2 its second exchange beside
// P2 -> P1 and P4 -> P3, steps 3-4 a butterfly on the survivors 0, 1, 3, 4, 7, 8, 11, 12.
TEST(ReduceSchedule, ThirteenProcessesFollowTheNonOverlappingExample) {
  Result<ReduceSchedule> schedule = MakeReduceSchedule(13, 1024, {});
  ASSERT_TRUE(schedule.ok());
  using K = StepKind;
  const K i = K::kIdle, t1 = K::kTripleFirst, t2 = K::kTripleSecond, bh = K::kButterflyHalving,
          ab = K::kPairAbsorb;
  const std::vector<std::vector<K>> kinds = Kinds(*schedule);
  ASSERT_EQ(kinds.size(), 8u);  // 2⌈log 13⌉
  EXPECT_EQ(kinds[0], (std::vector<K>{i, t1, t1, bh, bh, bh, bh, bh, bh, bh, bh, bh, bh}));
  EXPECT_EQ(kinds[1], (std::vector<K>{t2, t2, t2, ab, ab, ab, ab, ab, ab, ab, ab, i, i}));
  const auto& second = schedule->rounds[1].steps;
  EXPECT_EQ(second[2].send->to, 0);
  EXPECT_EQ(second[0].send->to, 1);
  EXPECT_EQ(second[5].send->to, 3);
  EXPECT_EQ(second[6].send->to, 4);
  EXPECT_EQ(second[9].send->to, 7);
  EXPECT_EQ(second[10].send->to, 8);
  for (int eliminated : {2, 5, 6, 9, 10})
    EXPECT_FALSE(second[eliminated].active_after) << eliminated;
  for (int survivor : {0, 1, 3, 4, 7, 8, 11, 12}) {
    EXPECT_TRUE(second[survivor].active_after) << survivor;
    EXPECT_EQ(kinds[2][survivor], K::kButterflyHalving);
    EXPECT_EQ(kinds[3][survivor], K::kButterflyHalving);
  }
  // Survivor butterfly: index s ⊕ 2 then s ⊕ 4 over (0, 1, 3, 4, 7, 8, 11, 12).
  EXPECT_EQ(schedule->rounds[2].steps[0].send->to, 3);
  EXPECT_EQ(schedule->rounds[2].steps[7].send->to, 11);
  EXPECT_EQ(schedule->rounds[3].steps[0].send->to, 7);
  EXPECT_EQ(schedule->rounds[3].steps[4].send->to, 12);
  // The last two routing rounds undo the elimination: triple allgather A with the pair
  // releases, then triple allgather B with the pair allgathers.
  EXPECT_EQ(kinds[6][0], K::kTripleAllgatherA);
  EXPECT_EQ(kinds[6][5], K::kPairRelease);
  EXPECT_EQ(kinds[7][1], K::kTripleAllgatherB);
  EXPECT_EQ(kinds[7][11], K::kButterflyAllgather);
}

// [PVM04] 5.3 claims: small vectors take ⌈log p⌉ + 1 rounds (⌈log p⌉ for powers of two), large
// vectors twice ⌈log p⌉.
TEST(ReduceSchedule, RoundCounts) {
  for (int p = 1; p <= 70; ++p) {
    const int log_p = p == 1 ? 0 : models::CeilLog2(p);
    Result<ReduceSchedule> small =
        MakeReduceSchedule(p, 64, {ReduceKind::kAllreduce, 0, kNoHalving});
    Result<ReduceSchedule> large = MakeReduceSchedule(p, 4096, {ReduceKind::kAllreduce, 0, 1});
    ASSERT_TRUE(small.ok() && large.ok());
    EXPECT_EQ(static_cast<int>(small->rounds.size()), log_p + (models::IsPowerOfTwo(p) ? 0 : 1))
        << p;
    EXPECT_EQ(static_cast<int>(large->rounds.size()), 2 * log_p) << p;
  }
}

// The generated schedules cost exactly what the paper's elimination formulas say (odd p), which
// ties the generator to the formulas independently of either's derivation.
TEST(ReduceSchedule, OddPScheduleCostsMatchTheEliminationFormulas) {
  constexpr int64_t m = 4096;
  for (int p = 3; p <= 69; p += 2) {
    SCOPED_TRACE(p);
    const CostCoefficients lat =
        *ReduceProtocolCoefficients(ReduceProtocol::kEliminationLatency, p);
    const CostCoefficients bw =
        *ReduceProtocolCoefficients(ReduceProtocol::kEliminationBandwidth, p);
    const ScheduleCost small =
        EvaluateSchedule(*MakeReduceSchedule(p, m, {ReduceKind::kAllreduce, 0, kNoHalving}));
    EXPECT_EQ(small.rounds, lat.alpha);
    EXPECT_EQ(small.sent_elements, lat.beta_m * m);
    EXPECT_EQ(small.reduced_elements, lat.gamma_m * m);
    const ScheduleCost large = EvaluateSchedule(*MakeReduceSchedule(p, m, {}));
    EXPECT_EQ(large.rounds, bw.alpha);
    EXPECT_EQ(large.sent_elements, bw.beta_m * m);
    EXPECT_EQ(large.reduced_elements, bw.gamma_m * m);
  }
}

// [PVM04] conclusion: for p = 24 or 40 the large-vector time drops below (1 + 1/2^(n+1))·(2mβ + mγ)
// with n = 3, against 2·(2mβ + mγ) before: a 47 % reduction.
TEST(ReduceSchedule, LargeVectorBoundForTwentyFourAndForty) {
  constexpr int64_t m = 1 << 12;
  for (int p : {24, 40}) {
    const ScheduleCost cost = EvaluateSchedule(*MakeReduceSchedule(p, m, {}));
    EXPECT_LE(cost.sent_elements, (1 + 1.0 / 16) * 2 * m) << p;
    EXPECT_LE(cost.reduced_elements, (1 + 1.0 / 16) * m) << p;
    EXPECT_GT(cost.sent_elements, 2 * m - 1) << p;  // the bound is not vacuous
  }
}

TEST(ReduceSchedule, RejectsBadInput) {
  EXPECT_EQ(MakeReduceSchedule(0, 4, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeReduceSchedule(4, 0, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeReduceSchedule(4, 4, {ReduceKind::kAllreduce, 0, 0}).status().code(),
            StatusCode::kInvalidArgument);
  Result<ReduceSchedule> bad_root = MakeReduceSchedule(4, 4, {ReduceKind::kReduce, 4, 1});
  EXPECT_EQ(bad_root.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_root.status().message().find("root 4"), std::string::npos);
}

}  // namespace
}  // namespace gridcast::reduce
