// Observations JSON: round trips (one run and several), and every validation rule rejects
// with a message naming the field.
#include "tomography/observations.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace gridcast {
namespace {

Observations Sample() {
  Observations obs;
  obs.source = "a";
  obs.payload_bytes = 100000;
  obs.piece_bytes = 65536;
  obs.bin_s = 0.25;
  obs.members = {
      {"a", 0, 0, 0, false}, {"b", 0.001, 2.75, 100000, true}, {"c", 0.5, 3.1, 50000, false}};
  obs.pairs = {{"a", "b", 60000, 4, 0.01, 1.3, {30000, 0, 30000}},
               {"c", "b", 40000, 3, 0.1 + 0.2, 2.6, {}},
               {"b", "c", 50000, 4, 0.7, 3.05, {10000, 40000}}};
  return obs;
}

TEST(ObservationsTest, RoundTripsExactly) {
  const Observations obs = Sample();
  Result<Observations> back = ObservationsFromJson(ObservationsToJson(obs));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, obs);  // doubles such as 0.1 + 0.2 survive bit for bit
}

TEST(ObservationsTest, RunsAcceptArrayOrSingleObject) {
  Observations second = Sample();
  second.source = "b";
  Result<std::vector<Observations>> runs =
      ObservationRunsFromJson(ObservationRunsToJson({Sample(), second}));
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[1], second);
  Result<std::vector<Observations>> one = ObservationRunsFromJson(ObservationsToJson(Sample()));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->size(), 1u);
}

TEST(ObservationsTest, FieldsAreTheDocumentedOnes) {
  const std::string json = ObservationsToJson(Sample());
  for (const char* key :
       {"\"version\":1", "\"source\":", "\"payload_bytes\":", "\"piece_bytes\":", "\"bin_s\":",
        "\"members\":", "\"pairs\":", "\"name\":", "\"start_s\":", "\"finish_s\":",
        "\"bytes_received\":", "\"complete\":", "\"from\":", "\"to\":", "\"bytes\":", "\"blocks\":",
        "\"first_s\":", "\"last_s\":", "\"bytes_per_bin\":"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

struct BadCase {
  const char* what;
  std::function<void(Observations&)> mutate;
  const char* message;  // expected in the error
};

TEST(ObservationsTest, ValidationNamesTheField) {
  const std::vector<BadCase> cases = {
      {"empty source", [](Observations& o) { o.source = ""; }, "source: empty"},
      {"source not a member", [](Observations& o) { o.source = "z"; }, "source: 'z' is not one of"},
      {"no payload", [](Observations& o) { o.payload_bytes = 0; }, "payload_bytes"},
      {"no piece size", [](Observations& o) { o.piece_bytes = 0; }, "piece_bytes"},
      {"zero bin", [](Observations& o) { o.bin_s = 0; }, "bin_s"},
      {"negative bin", [](Observations& o) { o.bin_s = -1; }, "bin_s"},
      {"no members", [](Observations& o) { o.members.clear(); }, "members: empty"},
      {"duplicate member", [](Observations& o) { o.members[2].name = "b"; },
       "members[2].name: duplicate 'b'"},
      {"negative start", [](Observations& o) { o.members[1].start_s = -0.5; },
       "members[1].start_s"},
      {"finish before start", [](Observations& o) { o.members[1].finish_s = 0; },
       "members[1].finish_s"},
      {"unknown sender", [](Observations& o) { o.pairs[0].from = "x"; },
       "pairs[0].from: unknown member 'x'"},
      {"unknown receiver", [](Observations& o) { o.pairs[1].to = "y"; },
       "pairs[1].to: unknown member 'y'"},
      {"self pair", [](Observations& o) { o.pairs[0].to = "a"; },
       "pairs[0].to: 'a' cannot receive from itself"},
      {"duplicate pair",
       [](Observations& o) {
         o.pairs[2].from = "c";
         o.pairs[2].to = "b";
       },
       "pairs[2]: duplicate pair"},
      {"negative first", [](Observations& o) { o.pairs[0].first_s = -1; }, "pairs[0].first_s"},
      {"last before first", [](Observations& o) { o.pairs[0].last_s = 0.001; }, "pairs[0].last_s"},
      {"infinite time", [](Observations& o) { o.pairs[0].last_s = INFINITY; }, "pairs[0].last_s"},
      {"blocks without bytes",
       [](Observations& o) {
         o.pairs[0].bytes = 0;
         o.pairs[0].bytes_per_bin.clear();
       },
       "pairs[0].blocks"},
      {"too many bytes per block", [](Observations& o) { o.pairs[0].blocks = 3; },
       "pairs[0].bytes"},
      {"bins sum too small", [](Observations& o) { o.pairs[0].bytes_per_bin[0] = 1; },
       "pairs[0].bytes_per_bin: sums to"},
      {"bins sum too large", [](Observations& o) { o.pairs[0].bytes_per_bin.push_back(1); },
       "pairs[0].bytes_per_bin: sums to more"},
  };
  for (const BadCase& c : cases) {
    Observations obs = Sample();
    c.mutate(obs);
    Status status = ValidateObservations(obs);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(status.message().find(c.message), std::string::npos)
        << c.what << ": " << status.message();
    // The parser applies the same checks (an infinity is written as null and fails as a type).
    EXPECT_FALSE(ObservationsFromJson(ObservationsToJson(obs)).ok()) << c.what;
  }
}

TEST(ObservationsTest, ParserRejectsMalformedAndMistypedInput) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "malformed JSON at byte"},
      // Found by fuzz_observations: a number beyond a double threw out of the parser.
      {R"({"version":4444e444})", "malformed JSON: [json.exception.out_of_range.406] number overflow"},
      {"[]", "runs: empty list"},
      {"42", "observations: expected a JSON object"},
      {R"({"version":2,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":1,"members":[],"pairs":[]})",
       "version: 2 is not supported"},
      {R"({"version":1,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":1,"members":[]})",
       "pairs: missing"},
      {R"({"version":1,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":1,"members":[],"pairs":[],"extra":0})",
       "extra: unknown field"},
      {R"({"version":1,"source":"a","payload_bytes":-1,"piece_bytes":1,"bin_s":1,"members":[],"pairs":[]})",
       "payload_bytes: expected an integer >= 0"},
      {R"({"version":1,"source":"a","payload_bytes":1.5,"piece_bytes":1,"bin_s":1,"members":[],"pairs":[]})",
       "payload_bytes: expected an integer >= 0"},
      {R"({"version":1,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":"x","members":[],"pairs":[]})",
       "bin_s: expected a number"},
      {R"({"version":1,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":1,"members":{},"pairs":[]})",
       "members: expected a list"},
      {R"({"version":1,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":1,"members":[{"name":"a","start_s":0,"finish_s":0,"bytes_received":0,"complete":1}],"pairs":[]})",
       "members[0].complete: expected true or false"},
      {R"({"version":1,"source":"a","payload_bytes":1,"piece_bytes":1,"bin_s":1,"members":[{"name":"a","start_s":0,"finish_s":0,"bytes_received":0,"complete":true}],"pairs":[{"from":"a","to":"a","bytes":0,"blocks":0,"first_s":0,"last_s":0,"bytes_per_bin":[-3]}]})",
       "pairs[0].bytes_per_bin[0]: expected an integer >= 0"},
  };
  for (const auto& [json, message] : cases) {
    Result<std::vector<Observations>> runs = ObservationRunsFromJson(json);
    ASSERT_FALSE(runs.ok()) << json;
    EXPECT_EQ(runs.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(runs.status().message().find(message), std::string::npos)
        << json << " -> " << runs.status().message();
  }
}

TEST(ObservationsTest, ErrorsInsideAnArrayNameTheRun) {
  Observations bad = Sample();
  bad.pairs[0].from = "x";
  Result<std::vector<Observations>> runs =
      ObservationRunsFromJson(ObservationRunsToJson({Sample(), bad}));
  ASSERT_FALSE(runs.ok());
  EXPECT_EQ(runs.status().message().rfind("runs[1].pairs[0].from: unknown member 'x'", 0), 0u)
      << runs.status().message();
}

}  // namespace
}  // namespace gridcast
