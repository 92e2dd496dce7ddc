// `gridcast send URL` with real daemons on loopback and a real HTTP(S) origin (origin_server.py):
// the source fetches while it sends, resumes a dropped origin with Range requests, refuses to mix
// two versions or to restart a server without ranges once bytes went on, verifies HTTPS against
// --ca, checks --sha256, and fails clearly (naming the origin, nothing kept as complete) on a
// 404, a refused connection and a wrong digest.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "deploy/local_cluster.h"
#include "include/gridcast/gridcast.h"
#include "deploy/subprocess.h"
#include "tests/integration/send_helpers.h"
#include "tests/unit/daemon/origin_server.h"

namespace gridcast {
namespace {

constexpr uint64_t kPayloadBytes = (5 << 20) + 12345;

// A loopback port nothing listens on (one the kernel just handed out and took back).
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

class OriginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new LocalCluster(GRIDCASTD, "origin", 4);
    fs::create_directories(Dir() / "root");
    std::string payload(kPayloadBytes, '\0');
    std::mt19937_64 random(11);
    for (char& c : payload) c = static_cast<char>(random());
    std::ofstream(Dir() / "root" / "data.bin", std::ios::binary) << payload;
    tls_ready_ = MakeTestCa(Dir());
    http_ = new OriginServer(Dir(), false);
    if (tls_ready_) https_ = new OriginServer(Dir(), true);
  }
  static void TearDownTestSuite() {
    delete http_;
    delete https_;
    delete cluster_;
  }
  static fs::path Dir() { return cluster_->dir() / "origin"; }
  static std::string Payload() { return (Dir() / "root" / "data.bin").string(); }
  static std::string Url(const std::string& path) { return "http://127.0.0.1:" + http_->port() + "/" + path; }

  // A send of `url` under `name` (and `more`) that must fail: its error, after checking that
  // no member holds `name` and the source kept nothing of the fetch.
  std::string ExpectFailure(const std::string& url, const std::string& name, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {url, "--name", name, "--chunk", "256KiB"};
    args.insert(args.end(), more.begin(), more.end());
    SendResult r = Send(*cluster_, args);
    EXPECT_NE(r.exit_code, 0) << r.output;
    for (int i = 0; i < cluster_->size(); ++i) {
      EXPECT_FALSE(fs::exists(cluster_->data_dir(i) / name)) << "member " << i << " holds " << name;
    }
    ExpectNoFetchLeft();
    return r.output;
  }
  static void ExpectNoFetchLeft() {
    const fs::path origins = cluster_->data_dir(0) / ".gridcast" / "origins";
    std::error_code ec;
    EXPECT_TRUE(!fs::exists(origins) || fs::is_empty(origins, ec)) << "a fetched file was left in " << origins;
  }
  // Every member and the source hold `name` whole.
  static void ExpectStaged(const std::string& name) {
    ExpectEverywhere(*cluster_, Payload(), name);
    EXPECT_EQ(FileSha256(cluster_->data_dir(0) / name), FileSha256(Payload())) << "the source's own copy";
    ExpectNoFetchLeft();
  }

  static inline LocalCluster* cluster_ = nullptr;
  static inline OriginServer* http_ = nullptr;
  static inline OriginServer* https_ = nullptr;
  static inline bool tls_ready_ = false;
};

TEST_F(OriginTest, StagesAPayloadFromAUrlToEveryMemberAndTheSource) {
  // Paced, so that members receive while the source still fetches.
  SendResult r = Send(*cluster_, {Url("plain/data.bin?rate=2000000"), "--chunk", "256KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.json["verified"].get<bool>()) << r.output;
  ASSERT_TRUE(r.json.contains("origin")) << r.output;
  const nlohmann::json& origin = r.json["origin"];
  EXPECT_EQ(origin["url"], "http://127.0.0.1:" + http_->port() + "/plain/data.bin") << "no query shown";
  EXPECT_EQ(origin["bytes"], kPayloadBytes);
  EXPECT_EQ(origin["attempts"], 1);
  EXPECT_EQ(r.json["sha256"], FileSha256(Payload()));
  // Sent while it arrived: the first byte left long before the last came in (2.6 s at 2 MB/s).
  ASSERT_TRUE(r.json["control"]["first_byte_s"].is_number()) << r.output;
  EXPECT_LT(r.json["control"]["first_byte_s"].get<double>() + 0.5, origin["fetched_s"].get<double>()) << r.output;
  ExpectStaged("data.bin");
}

TEST_F(OriginTest, ADroppedOriginIsResumedFromTheFirstMissingByte) {
  SendResult r = Send(*cluster_, {Url("drop/2000000/2/data.bin?rate=8000000"), "--name", "dropped.bin", "--chunk",
                                  "256KiB", "--mode", "hybrid"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.json["origin"]["resumed"], 2) << r.output;
  const std::vector<std::string> asked = http_->Requests("log", "drop/2000000/2/data.bin?rate=8000000");
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_NE(asked[1].find("\"Range\": \"bytes=2000000-\""), std::string::npos) << asked[1];
  ExpectStaged("dropped.bin");
}

TEST_F(OriginTest, TheSha256GivenIsChecked) {
  SendResult r = Send(*cluster_, {Url("plain/data.bin"), "--name", "checked.bin", "--sha256", FileSha256(Payload())});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectStaged("checked.bin");
  const std::string wrong(64, '0');
  const std::string error = ExpectFailure(Url("plain/data.bin"), "wrong.bin", {"--sha256", wrong});
  EXPECT_NE(error.find("differs from the whole-payload SHA-256"), std::string::npos) << error;
}

TEST_F(OriginTest, AServerWithoutRangesFailsClearlyOnceBytesWentOn) {
  // Cut after 3 MB, well after the broadcast started (1.5 s in, at 2 MB/s).
  const std::string error = ExpectFailure(Url("noranges/3000000/1/data.bin?rate=2000000"), "noranges.bin");
  EXPECT_NE(error.find("does not serve ranges"), std::string::npos) << error;
}

TEST_F(OriginTest, AnOriginThatChangedFailsRatherThanMixingTwoVersions) {
  const std::string error = ExpectFailure(Url("changing/3000000/data.bin?rate=4000000"), "changing.bin");
  EXPECT_NE(error.find("changed between requests"), std::string::npos) << error;
  EXPECT_NE(error.find("two versions are never mixed"), std::string::npos) << error;
}

TEST_F(OriginTest, MissingAndUnreachableOriginsFailNamingTheUrl) {
  std::string error = ExpectFailure(Url("status/404"), "missing.bin");
  EXPECT_NE(error.find("HTTP 404"), std::string::npos) << error;
  // A port nobody listens on: refused, asked six times with a backoff, then given up (about 8 s).
  const std::string refused = "http://127.0.0.1:" + std::to_string(UnusedPort()) + "/data.bin";
  error = ExpectFailure(refused, "refused.bin");
  EXPECT_NE(error.find("127.0.0.1"), std::string::npos) << error;
  EXPECT_NE(error.find("attempts in a row"), std::string::npos) << error;
}

TEST_F(OriginTest, HttpsIsVerifiedAgainstTheGivenCaAndHeadersAreNeverShown) {
  ASSERT_TRUE(tls_ready_ && https_->up()) << "openssl could not make the test CA, or the TLS origin did not start";
  const std::string url = "https://127.0.0.1:" + https_->port() + "/plain/data.bin";
  const std::string token = "Authorization: Bearer secret-token-xyz";
  std::string error = ExpectFailure(url, "unverified.bin", {"--header", token});
  EXPECT_EQ(error.find("secret-token-xyz"), std::string::npos) << error;
  SendResult r = Send(*cluster_, {url, "--name", "tls.bin", "--ca", (Dir() / "ca.crt").string(), "--header", token});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("secret-token-xyz"), std::string::npos);
  ExpectStaged("tls.bin");
  const std::vector<std::string> asked = https_->Requests("log-tls", "/plain/data.bin");
  ASSERT_FALSE(asked.empty());
  EXPECT_NE(asked.back().find("secret-token-xyz"), std::string::npos) << "the header reached the origin";
  for (int i = 0; i < cluster_->size(); ++i) {
    EXPECT_EQ(ReadFile(cluster_->log(i)).find("secret-token-xyz"), std::string::npos) << "member " << i << "'s log";
  }
}

TEST_F(OriginTest, HeadersMayComeFromTheEnvironment) {
  // What slurm stage hands its `gridcast send`: kept out of the process list.
  setenv("GRIDCAST_ORIGIN_HEADERS", "X-Env-Token: env-secret-1\nX-Other: env-secret-2\n", 1);
  SendResult r = Send(*cluster_, {Url("plain/data.bin"), "--name", "env.bin"});
  unsetenv("GRIDCAST_ORIGIN_HEADERS");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectStaged("env.bin");
  const std::vector<std::string> asked = http_->Requests("log", "/plain/data.bin");
  ASSERT_FALSE(asked.empty());
  EXPECT_NE(asked.back().find("env-secret-1"), std::string::npos) << asked.back();
  EXPECT_NE(asked.back().find("env-secret-2"), std::string::npos) << asked.back();
  EXPECT_EQ(r.output.find("env-secret"), std::string::npos);
}

TEST_F(OriginTest, TheCApiStagesAUrl) {
  gridcast_client* client = nullptr;
  ASSERT_EQ(gridcast_open(cluster_->cluster_file().c_str(), nullptr, &client), 0);
  gridcast_broadcast* broadcast = nullptr;
  const std::string url = Url("drop/1500000/1/data.bin");
  const std::string sha256 = FileSha256(Payload());
  const char* headers[] = {"X-Token: c-api-token"};
  ASSERT_EQ(gridcast_send_url_start(client, url.c_str(), "c-api.bin", nullptr, sha256.c_str(), headers, 1, nullptr,
                                    &broadcast),
            0)
      << gridcast_last_error(client);
  double seconds = 0;
  EXPECT_EQ(gridcast_wait(client, broadcast, &seconds), 0) << gridcast_last_error(client);
  gridcast_broadcast_free(broadcast);
  gridcast_close(client);
  ExpectStaged("c-api.bin");
  const std::vector<std::string> asked = http_->Requests("log", "drop/1500000/1/data.bin");
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_NE(asked[1].find("c-api-token"), std::string::npos) << asked[1];
}

TEST_F(OriginTest, BadOriginRequestsAreRefusedBeforeAnythingIsFetched) {
  std::string error = ExpectFailure("ftp://127.0.0.1/data.bin", "ftp.bin");
  EXPECT_NE(error.find("not a readable file"), std::string::npos) << error;
  SendResult unnamed = Send(*cluster_, {Url("plain/")});
  EXPECT_NE(unnamed.exit_code, 0) << unnamed.output;
  EXPECT_NE(unnamed.output.find("name the payload"), std::string::npos) << unnamed.output;
  error = ExpectFailure(Url("plain/data.bin"), "header.bin", {"--header", "no colon here"});
  EXPECT_NE(error.find("origin header 1"), std::string::npos) << error;
  EXPECT_EQ(error.find("no colon here"), std::string::npos) << error;
  error = ExpectFailure(Url("plain/data.bin"), "sha.bin", {"--sha256", "abc"});
  EXPECT_NE(error.find("--sha256"), std::string::npos) << error;
}

}  // namespace
}  // namespace gridcast
