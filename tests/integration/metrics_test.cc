// gridcastd --metrics: real daemons on loopback, scraped over HTTP after real broadcasts. The
// exposition passes `promtool check metrics`, a real Prometheus server scrapes every daemon and
// answers queries over them, and the numbers are the broadcast's own: bytes per peer add up to
// the payload on every edge, every chunk verified once, each plan ended once.
#include <gtest/gtest.h>

#include "tests/integration/exposition.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

class MetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new LocalCluster(GRIDCASTD, "metrics", 4, {}, LocalCluster::Transport::kPlain,
                                LocalCluster::Metrics::kServe);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  // What every scrape of member i shows of the broadcasts so far.
  Exposition At(int i) { return Exposition(Scrape(*cluster_, i)); }

  static LocalCluster* cluster_;
};
LocalCluster* MetricsTest::cluster_ = nullptr;

constexpr uint64_t kChunk = 256 << 10;
constexpr uint64_t kBytes = 12 * kChunk + 5;  // 13 chunks

TEST_F(MetricsTest, APushBroadcastIsCountedExactlyAndTheExpositionIsValid) {
  std::vector<Exposition> before;
  for (int i = 0; i < cluster_->size(); ++i) before.push_back(At(i));
  const std::string path = cluster_->MakePayload("pushed.bin", kBytes);
  SendResult r = Send(*cluster_, {path, "--algo", "chain", "--chunk", "256KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(*cluster_, path, "pushed.bin");

  double sent_total = 0, received_total = 0;
  for (int i = 0; i < cluster_->size(); ++i) {
    SCOPED_TRACE("m" + std::to_string(i));
    const Exposition now = At(i);
    const Exposition& then = before[i];
    auto grew = [&](const std::string& name, const std::map<std::string, std::string>& labels) {
      return now.Sum(name, labels) - then.Sum(name, labels);
    };
    const double sent = grew("gridcast_peer_sent_bytes_total", {{"transport", "push"}});
    const double received = grew("gridcast_peer_received_bytes_total", {{"transport", "push"}});
    sent_total += sent;
    received_total += received;
    // A chain: every member but the last sends the payload once, every receiver gets it once.
    EXPECT_EQ(received, i == 0 ? 0 : kBytes);
    EXPECT_EQ(grew("gridcast_chunks_verified_total", {{"transport", "push"}}), i == 0 ? 0 : 13);
    EXPECT_EQ(grew("gridcast_chunks_refused_total", {}), 0);
    EXPECT_EQ(grew("gridcast_chunks_resent_total", {}), 0);
    EXPECT_EQ(grew("gridcast_broadcasts_finished_total", {{"mode", "push"}}), 1);
    EXPECT_EQ(grew("gridcast_broadcasts_failed_total", {}), 0);
    EXPECT_EQ(now.Value("gridcast_broadcasts_active", {{"mode", "push"}}), 0);
    // The source sends from its send root, outside its data directory.
    EXPECT_GE(now.Value("gridcast_store_bytes", {{"dir", "data"}, {"complete", "true"}}).value_or(0),
              i == 0 ? 0 : kBytes);
    EXPECT_GT(now.Value("gridcast_store_free_bytes", {{"dir", "data"}}).value_or(0), 0);
    EXPECT_EQ(now.Sum("gridcast_build_info", {}), 1);  // one series, whatever the version's labels
    if (i == 0) {
      EXPECT_EQ(grew("gridcast_control_calls_total", {{"method", "Broadcast"}, {"code", "OK"}}), 1);
    } else {
      EXPECT_GE(grew("gridcast_control_calls_total", {{"method", "Prepare"}, {"code", "OK"}}), 1);
    }
  }
  EXPECT_EQ(sent_total, 3 * kBytes);
  EXPECT_EQ(received_total, 3 * kBytes);

  for (int i = 0; i < cluster_->size(); ++i) {
    Result<CommandOutput> checked = RunCommand(
        {"sh", "-c", "curl -sSf http://" + cluster_->metrics_address(i) + "/metrics | promtool check metrics"});
    ASSERT_TRUE(checked.ok());
    EXPECT_EQ(checked->exit_code, 0) << checked->output;
  }
}

TEST_F(MetricsTest, APullBroadcastCountsBitTorrentBytesPerPeer) {
  std::vector<Exposition> before;
  for (int i = 0; i < cluster_->size(); ++i) before.push_back(At(i));
  const std::string path = cluster_->MakePayload("pulled.bin", 40 * kChunk);
  SendResult r = Send(*cluster_, {path, "--mode", "pull", "--chunk", "256KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(*cluster_, path, "pulled.bin");
  for (int i = 1; i < cluster_->size(); ++i) {
    SCOPED_TRACE("m" + std::to_string(i));
    const Exposition now = At(i);
    auto grew = [&](const std::string& name, const std::map<std::string, std::string>& labels) {
      return now.Sum(name, labels) - before[i].Sum(name, labels);
    };
    // Each block once: what libtorrent finished, from whichever peers sent it.
    EXPECT_EQ(grew("gridcast_peer_received_bytes_total", {{"transport", "bittorrent"}}), 40 * kChunk);
    EXPECT_EQ(grew("gridcast_chunks_verified_total", {{"transport", "bittorrent"}}), 40);
    EXPECT_EQ(grew("gridcast_broadcasts_finished_total", {{"mode", "pull"}}), 1);
  }
  const double source_sent = At(0).Sum("gridcast_peer_sent_bytes_total", {{"transport", "bittorrent"}}) -
                             before[0].Sum("gridcast_peer_sent_bytes_total", {{"transport", "bittorrent"}});
  EXPECT_GT(source_sent, 0);
}

// A hybrid plan verifies each chunk once, by whichever path brought it first: push and
// BitTorrent together count every chunk once at every receiver.
TEST_F(MetricsTest, AHybridBroadcastCountsEachChunkOnce) {
  std::vector<Exposition> before;
  for (int i = 0; i < cluster_->size(); ++i) before.push_back(At(i));
  const std::string path = cluster_->MakePayload("hybrid.bin", 40 * kChunk);
  SendResult r = Send(*cluster_, {path, "--mode", "hybrid", "--algo", "binary", "--chunk", "256KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(*cluster_, path, "hybrid.bin");
  for (int i = 1; i < cluster_->size(); ++i) {
    const Exposition now = At(i);
    EXPECT_EQ(now.Sum("gridcast_chunks_verified_total") - before[i].Sum("gridcast_chunks_verified_total"), 40)
        << "m" << i;
  }
}

// A refused control call is counted under its method and code.
TEST_F(MetricsTest, ControlCallsAreCountedByMethodAndCode) {
  const double before = At(1).Sum("gridcast_control_calls_total", {{"method", "Cancel"}, {"code", "INVALID_ARGUMENT"}});
  ControlClient client(cluster_->config().members[1].control_address, cluster_->config().secret);
  v1::CancelRequest bad;
  bad.set_plan_id("short");
  EXPECT_FALSE(client.Cancel(bad).ok());
  EXPECT_EQ(At(1).Sum("gridcast_control_calls_total", {{"method", "Cancel"}, {"code", "INVALID_ARGUMENT"}}),
            before + 1);
}

// Debian's Prometheus server scrapes every daemon; its queries add up what the daemons counted.
TEST_F(MetricsTest, APrometheusServerScrapesEveryDaemon) {
  const fs::path dir = cluster_->dir() / "prometheus";
  fs::create_directories(dir);
  std::string targets;
  for (int i = 0; i < cluster_->size(); ++i) targets += (i ? ", '" : "'") + cluster_->metrics_address(i) + "'";
  std::ofstream(dir / "prometheus.yml") << "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gridcast\n"
                                        << "    static_configs:\n      - targets: [" << targets << "]\n";
  const std::string web = "127.0.0.1:" + std::to_string(12000 + static_cast<int>(getpid() % 750) * 8 + 7);
  Result<ChildProcess> server = ChildProcess::Start(
      {"prometheus", "--config.file=" + (dir / "prometheus.yml").string(), "--storage.tsdb.path=" + (dir / "tsdb").string(),
       "--web.listen-address=" + web},
      (dir / "prometheus.log").string());
  ASSERT_TRUE(server.ok()) << server.status().message();
  const auto query = [&](const std::string& promql) -> std::optional<double> {
    Result<CommandOutput> out =
        RunCommand({"curl", "-sSf", "-G", "http://" + web + "/api/v1/query", "--data-urlencode", "query=" + promql});
    if (!out.ok() || out->exit_code != 0) return std::nullopt;
    nlohmann::json answer = nlohmann::json::parse(out->output, nullptr, false);
    if (!answer.is_object() || answer["status"] != "success" || answer["data"]["result"].empty()) return std::nullopt;
    return std::stod(answer["data"]["result"][0]["value"][1].get<std::string>());
  };
  // Up to 30 s for the server to start and scrape each target once.
  std::optional<double> up;
  for (int attempt = 0; attempt < 300 && up != cluster_->size(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    up = query("sum(up{job=\"gridcast\"})");
  }
  ASSERT_EQ(up, cluster_->size()) << ReadFile(dir / "prometheus.log");

  // A broadcast now: the server's next scrapes see its chunks at every receiver.
  std::optional<double> verified_before = query("sum(gridcast_chunks_verified_total{transport=\"push\"})");
  ASSERT_TRUE(verified_before.has_value());
  const std::string path = cluster_->MakePayload("scraped.bin", kBytes);
  SendResult r = Send(*cluster_, {path, "--algo", "binary", "--chunk", "256KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Each target is scraped on its own schedule: wait (up to 30 s) until every one was scraped
  // after the broadcast.
  std::optional<double> verified, finished;
  for (int attempt = 0; attempt < 300 && (verified != *verified_before + 3 * 13 || finished != cluster_->size());
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    verified = query("sum(gridcast_chunks_verified_total{transport=\"push\"})");
    finished = query("count(gridcast_broadcasts_finished_total{mode=\"push\"} >= 1)");
  }
  EXPECT_EQ(verified, *verified_before + 3 * 13);
  EXPECT_EQ(finished, cluster_->size());
}

}  // namespace
}  // namespace gridcast
