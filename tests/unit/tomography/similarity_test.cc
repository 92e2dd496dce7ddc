// AggregateRuns: per-run normalisation, symmetry, node order, and the flagged nodes.
#include "tomography/similarity.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

Observations MakeRun(const std::string& source, uint64_t payload_bytes,
                     const std::vector<std::string>& members,
                     const std::vector<std::tuple<std::string, std::string, uint64_t>>& pairs) {
  Observations obs;
  obs.source = source;
  obs.payload_bytes = payload_bytes;
  obs.piece_bytes = 16384;
  for (const std::string& m : members) obs.members.push_back({.name = m});
  for (const auto& [from, to, bytes] : pairs) {
    PairObservation p;
    p.from = from;
    p.to = to;
    p.bytes = bytes;
    p.blocks = (bytes + kObservationBlockBytes - 1) / kObservationBlockBytes;
    obs.pairs.push_back(std::move(p));
  }
  return obs;
}

TEST(SimilarityTest, EachRunWeighsTheSameAndTheMatrixIsSymmetric) {
  // Run 1 moves 1000 bytes to 2 receivers, run 2 moves 10x as much: same shape, same weight.
  const Observations small =
      MakeRun("a", 1000, {"a", "b", "c"}, {{"a", "b", 1000}, {"b", "c", 600}, {"a", "c", 400}});
  const Observations large =
      MakeRun("a", 10000, {"a", "b", "c"}, {{"a", "b", 10000}, {"b", "c", 6000}, {"a", "c", 4000}});
  Result<Similarity> one = AggregateRuns({small}, {});
  Result<Similarity> two = AggregateRuns({small, large}, {});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_DOUBLE_EQ(one->weight.at(0, 1), 1000.0 / (1000 * 2));
  EXPECT_DOUBLE_EQ(one->weight.at(1, 2), 600.0 / 2000);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(two->weight.at(i, i), 0);
    for (int j = 0; j < 3; ++j) {
      EXPECT_DOUBLE_EQ(two->weight.at(i, j), two->weight.at(j, i));
      EXPECT_DOUBLE_EQ(two->weight.at(i, j), 2 * one->weight.at(i, j));
    }
  }
  EXPECT_EQ(two->runs, 2);
  EXPECT_TRUE(two->flagged.empty());
}

TEST(SimilarityTest, BothDirectionsAddUp) {
  Result<Similarity> s =
      AggregateRuns({MakeRun("a", 100, {"a", "b"}, {{"a", "b", 100}, {"b", "a", 50}})}, {});
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->weight.at(0, 1), 1.5);
}

TEST(SimilarityTest, GivenOrderIsKeptAndChecked) {
  const Observations run = MakeRun("a", 100, {"a", "b"}, {{"a", "b", 100}});
  SimilarityOptions options;
  options.order = {"b", "extra", "a"};
  Result<Similarity> s = AggregateRuns({run}, options);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->names, options.order);
  EXPECT_DOUBLE_EQ(s->weight.at(0, 2), 1.0);
  ASSERT_EQ(s->flagged.size(), 1u);
  EXPECT_EQ(s->flagged[0].name, "extra");
  EXPECT_EQ(s->flagged[0].reason.rfind("not observed", 0), 0u);
  EXPECT_EQ(s->UsableNodes(), (std::vector<int>{0, 2}));

  options.order = {"a"};
  EXPECT_NE(AggregateRuns({run}, options).status().message().find("misses member 'b'"),
            std::string::npos);
  options.order = {"a", "b", "a"};
  EXPECT_NE(AggregateRuns({run}, options).status().message().find("duplicate name 'a'"),
            std::string::npos);
}

TEST(SimilarityTest, FlagsNodesWithTooLittleData) {
  std::vector<std::tuple<std::string, std::string, uint64_t>> pairs;
  for (const char* from : {"a", "b", "c", "d"}) {
    for (const char* to : {"b", "c", "d"}) {
      if (std::string(from) != to) pairs.emplace_back(from, to, 1000);
    }
  }
  pairs.emplace_back("a", "thin", 10);  // 1% of what the others get
  const Observations run = MakeRun("a", 3000, {"a", "b", "c", "d", "thin", "dead"}, pairs);
  Result<Similarity> s = AggregateRuns({run}, {});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->flagged.size(), 2u);
  EXPECT_EQ(s->flagged[0].name, "dead");
  EXPECT_EQ(s->flagged[0].reason.rfind("not observed", 0), 0u) << s->flagged[0].reason;
  EXPECT_EQ(s->flagged[1].name, "thin");
  EXPECT_EQ(s->flagged[1].reason.rfind("little data", 0), 0u) << s->flagged[1].reason;

  // A receiver that only ever sent (e.g. a seed that never got a byte) is flagged too.
  const Observations odd = MakeRun("a", 100, {"a", "b", "c"}, {{"a", "b", 100}, {"c", "b", 100}});
  Result<Similarity> t = AggregateRuns({odd}, {});
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->flagged.size(), 1u);
  EXPECT_EQ(t->flagged[0].name, "c");
  EXPECT_EQ(t->flagged[0].reason.rfind("never received", 0), 0u);
}

TEST(SimilarityTest, DegenerateInputs) {
  Result<Similarity> none = AggregateRuns({}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->weight.size(), 0);
  Result<Similarity> alone = AggregateRuns({MakeRun("a", 100, {"a"}, {})}, {});
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(alone->weight.size(), 1);
  ASSERT_EQ(alone->flagged.size(), 1u);  // a lone source shows nothing
  Observations bad = MakeRun("a", 100, {"a", "b"}, {{"a", "b", 100}});
  bad.bin_s = 0;
  Result<Similarity> invalid = AggregateRuns({bad}, {});
  EXPECT_EQ(invalid.status().message().rfind("runs[0].bin_s", 0), 0u) << invalid.status().message();
}

}  // namespace
}  // namespace gridcast
