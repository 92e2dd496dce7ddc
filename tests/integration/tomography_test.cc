// gridcast tomography on real gridcastd processes on loopback: the JSON's shape, every member
// placed once, the probe payloads, the files it writes, and `gridcast send --algo auto`
// planning on the cached inferred topology. (Loopback has no bottleneck: the clustering itself
// is checked on netgrid and in the library's unit tests.)
#include <gtest/gtest.h>

#include <map>

#include "collectives/topology.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

CommandOutput RunGridcast(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {GRIDCAST_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandOutput> out = RunCommand(argv);
  return out.ok() ? *out : CommandOutput{-1, out.status().message()};
}

// The last line that parses as a JSON object (progress lines go to stderr, mixed in).
nlohmann::json LastJsonLine(const std::string& output) {
  nlohmann::json found;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    nlohmann::json j = nlohmann::json::parse(output.substr(start, end - start), nullptr, false);
    if (!j.is_discarded() && j.is_object()) found = j;
    start = end + 1;
  }
  return found;
}

TEST(TomographyCliTest, TwoRunsReportEveryMemberOnceAndFeedSendAuto) {
  LocalCluster cluster(GRIDCASTD, "tomography", 5);
  const fs::path topology = cluster.dir() / "inferred.yaml";
  const fs::path svg = cluster.dir() / "clusters.svg";
  const fs::path observations = cluster.dir() / "runs.json";
  const CommandOutput out = RunGridcast({"tomography", "--cluster", cluster.cluster_file(), "--runs", "2", "--size",
                                         "4MiB", "--json", "--topology-out", topology.string(), "--svg", svg.string(),
                                         "--observations-out", observations.string()});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const nlohmann::json j = LastJsonLine(out.output);
  ASSERT_TRUE(j.is_object()) << out.output;
  EXPECT_EQ(j["runs"], 2);
  EXPECT_GT(j["seconds"].get<double>(), 0);
  const size_t k = j["clusters"].size();
  ASSERT_EQ(j["inter_cluster_mbit"].size(), k);
  for (const auto& row : j["inter_cluster_mbit"]) EXPECT_EQ(row.size(), k);
  EXPECT_EQ(j["intra_cluster_mbit"].size(), k);
  std::map<std::string, int> seen;
  for (const auto& c : j["clusters"]) {
    for (const auto& name : c) ++seen[name.get<std::string>()];
  }
  for (const auto& f : j["flagged"]) ++seen[f["name"].get<std::string>()];
  ASSERT_EQ(seen.size(), 5u) << j.dump();
  for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;

  // The inferred topology reads back, with every member a node.
  Result<NetworkModel> model = ParseTopology(ReadFile(topology));
  ASSERT_TRUE(model.ok()) << model.status().message();
  for (const ClusterMember& m : cluster.config().members) EXPECT_TRUE(model->FindNode(m.name)) << m.name;
  EXPECT_EQ(ReadFile(cluster.dir() / ".gridcast-tomography" / "topology.yaml"), ReadFile(topology));
  EXPECT_NE(ReadFile(svg).find("<svg"), std::string::npos);
  // Sources rotate; every member ends with the last run's probe and no temporary file.
  const nlohmann::json runs = nlohmann::json::parse(ReadFile(observations));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["source"], "m0");
  EXPECT_EQ(runs[1]["source"], "m3");  // rotation stride 3 of 5
  const std::string probe = FileSha256(cluster.data_dir(3) / "tomography-probe.bin");
  for (int i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(fs::file_size(cluster.data_dir(i) / "tomography-probe.bin"), 4u << 20) << i;
    EXPECT_EQ(FileSha256(cluster.data_dir(i) / "tomography-probe.bin"), probe) << i;
    for (const auto& entry : fs::directory_iterator(cluster.data_dir(i))) {
      EXPECT_EQ(entry.path().filename().string().rfind(".gridcast-probe", 0), std::string::npos) << entry.path();
    }
  }

  // The cluster file names no topology: auto plans on the inferred one and says how old it is.
  const std::string payload = cluster.MakePayload("after-tomography.bin", 3 << 20);
  SendResult sent = Send(cluster, {payload, "--algo", "auto"});
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  EXPECT_TRUE(sent.json.contains("inferred_topology_age_s")) << sent.json.dump();
  EXPECT_NE(sent.json["mode"], "hybrid");  // a described network: no default hybrid
  ExpectEverywhere(cluster, payload, "after-tomography.bin");

  // A cache that no longer fits the cluster (a member missing) is ignored with a warning.
  std::ofstream(cluster.dir() / ".gridcast-tomography" / "topology.yaml")
      << "name: stale\nswitches: [{name: s}]\nnodes: [{switch: s, names: [m0, m1]}]\n";
  const std::string again = cluster.MakePayload("stale-cache.bin", 1 << 20);
  const CommandOutput stale = RunGridcast({"send", again, "--cluster", cluster.cluster_file(), "--algo", "auto"});
  ASSERT_EQ(stale.exit_code, 0) << stale.output;
  EXPECT_NE(stale.output.find("ignoring the inferred topology"), std::string::npos) << stale.output;
  EXPECT_NE(stale.output.find("no node 'm2'"), std::string::npos) << stale.output;
  EXPECT_EQ(stale.output.find("inferred by gridcast tomography"), std::string::npos) << stale.output;
}

TEST(TomographyCliTest, BadArgumentsExitTwoWithOneLine) {
  LocalCluster cluster(GRIDCASTD, "tomography-args", 2);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--runs", "0"}, {"--runs", "many"}, {"--runs", "auto", "--max-runs", "2"},
        {"--sources", "nobody"}, {"--size", "0"}, {"--truth", "/nonexistent.yaml"}}) {
    std::vector<std::string> args = {"tomography", "--cluster", cluster.cluster_file()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CommandOutput out = RunGridcast(args);
    EXPECT_EQ(out.exit_code, 2) << extra[0] << ": " << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
  }
  // A probe beyond the daemon's bound is refused as bad input too.
  const CommandOutput huge = RunGridcast({"tomography", "--cluster", cluster.cluster_file(), "--size", "65GiB"});
  EXPECT_EQ(huge.exit_code, 2) << huge.output;
}

}  // namespace
}  // namespace gridcast
