// FetchOrigin against a real HTTP(S) server (origin_server.py, Debian's python3) on loopback
// that drops connections, ignores ranges, changes its bytes, redirects and fails on request.
#include "daemon/store/http_origin.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "common/file_io.h"
#include "tests/unit/daemon/origin_server.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class HttpOriginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("gridcast-origin-" + std::to_string(getpid())));
    fs::create_directories(*dir_ / "root");
    payload_ = new std::string(3 << 20, '\0');
    std::mt19937_64 random(7);
    for (char& c : *payload_) c = static_cast<char>(random());
    std::ofstream(*dir_ / "root" / "payload.bin", std::ios::binary) << *payload_;
    std::ofstream(*dir_ / "root" / "empty.bin", std::ios::binary);
    tls_ready_ = MakeTestCa(*dir_);
    http_ = new OriginServer(*dir_, false);
    if (tls_ready_) https_ = new OriginServer(*dir_, true);
  }
  static void TearDownTestSuite() {
    delete http_;
    delete https_;
    fs::remove_all(*dir_);
    delete dir_;
    delete payload_;
  }
  void SetUp() override {
    ASSERT_TRUE(http_->up()) << "the test origin did not start";
    out_ = *dir_ / ("out-" + std::to_string(++outputs_));
    fd_ = open(out_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override { close(fd_); }

  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + http_->port() + "/" + path; }
  static OriginRequest Quick(std::string url) {
    OriginRequest request;
    request.url = std::move(url);
    request.first_backoff = 10ms;
    request.max_backoff = 40ms;
    return request;
  }
  Result<OriginFetched> Fetch(const OriginRequest& request, bool forwarded = false) {
    events_.head = [this](const OriginHead& head) { heads_.push_back(head); };
    events_.arrived = [this](uint64_t bytes) { arrived_ = bytes; };
    events_.forwarded = [forwarded] { return forwarded; };
    return FetchOrigin(request, fd_, SystemFileIo(), events_, cancel_);
  }
  std::string Written() const { return ReadWholeFile(out_).substr(0, arrived_); }

  static inline fs::path* dir_ = nullptr;
  static inline std::string* payload_ = nullptr;
  static inline bool tls_ready_ = false;
  static inline OriginServer* http_ = nullptr;
  static inline OriginServer* https_ = nullptr;
  static inline int outputs_ = 0;
  fs::path out_;
  int fd_ = -1;
  OriginEvents events_;
  std::atomic<bool> cancel_{false};
  std::vector<OriginHead> heads_;
  uint64_t arrived_ = 0;
};

TEST_F(HttpOriginTest, FetchesThePayloadAndSaysItsSizeAndValidatorsFirst) {
  Result<OriginFetched> fetched = Fetch(Quick(Url("plain/payload.bin")));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->bytes, payload_->size());
  EXPECT_EQ(fetched->attempts, 1);
  ASSERT_EQ(heads_.size(), 1u);
  EXPECT_EQ(heads_[0].size, payload_->size());
  EXPECT_FALSE(heads_[0].etag.empty());
  EXPECT_FALSE(heads_[0].last_modified.empty());
  EXPECT_EQ(Written(), *payload_);
}

TEST_F(HttpOriginTest, AnEmptyPayloadIsFetched) {
  Result<OriginFetched> fetched = Fetch(Quick(Url("plain/empty.bin")));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->bytes, 0u);
  ASSERT_EQ(heads_.size(), 1u);
  EXPECT_EQ(heads_[0].size, 0u);
}

TEST_F(HttpOriginTest, DroppedConnectionsAreResumedWithRangeRequestsFromTheFirstMissingByte) {
  Result<OriginFetched> fetched = Fetch(Quick(Url("drop/1000000/2/payload.bin")));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->attempts, 3);
  EXPECT_EQ(fetched->resumed, 2);
  EXPECT_EQ(Written(), *payload_);
  const std::vector<std::string> requests = http_->Requests("log", "drop/1000000/2/payload.bin");
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].find("Range"), std::string::npos);
  EXPECT_NE(requests[1].find("\"Range\": \"bytes=1000000-\""), std::string::npos) << requests[1];
  EXPECT_NE(requests[2].find("\"Range\": \"bytes=2000000-\""), std::string::npos) << requests[2];
}

TEST_F(HttpOriginTest, AServerWithoutRangesRestartsFromZeroOnlyWhileNothingWasSentOn) {
  Result<OriginFetched> fetched = Fetch(Quick(Url("noranges/1000000/1/payload.bin")));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->restarted, 1);
  EXPECT_EQ(Written(), *payload_);
  Result<OriginFetched> refused = Fetch(Quick(Url("noranges/1000000/1/payload.bin?again")), /*forwarded=*/true);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("does not serve ranges"), std::string::npos) << refused.status().message();
}

TEST_F(HttpOriginTest, AnOriginWhoseBytesChangedBetweenRequestsFailsTheFetch) {
  Result<OriginFetched> fetched = Fetch(Quick(Url("changing/1000000/payload.bin")));
  ASSERT_EQ(fetched.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(fetched.status().message().find("\"v1\"' then '\"v2\""), std::string::npos) << fetched.status().message();
}

TEST_F(HttpOriginTest, AnOriginWithoutValidatorsIsResumedOnItsLengthAlone) {
  Result<OriginFetched> fetched = Fetch(Quick(Url("bare/1500000/1/payload.bin")));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->resumed, 1);
  EXPECT_EQ(Written(), *payload_);
}

TEST_F(HttpOriginTest, HttpErrorsNameTheStatusAndTheUrlWithoutItsQuery) {
  Result<OriginFetched> missing = Fetch(Quick(Url("status/404?X-Signature=secret")));
  ASSERT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("HTTP 404"), std::string::npos);
  EXPECT_NE(missing.status().message().find("/status/404"), std::string::npos);
  EXPECT_EQ(missing.status().message().find("secret"), std::string::npos);
  EXPECT_EQ(Fetch(Quick(Url("status/403"))).status().code(), StatusCode::kPermissionDenied);
  // A server error is retried, a bounded number of times.
  OriginRequest request = Quick(Url("status/503"));
  request.attempts = 3;
  Result<OriginFetched> unavailable = Fetch(request);
  ASSERT_EQ(unavailable.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(unavailable.status().message().find("HTTP 503, 3 attempts"), std::string::npos)
      << unavailable.status().message();
  EXPECT_EQ(http_->Requests("log", "status/503").size(), 3u);
}

TEST_F(HttpOriginTest, ARefusedConnectionIsRetriedThenNamed) {
  OriginRequest request = Quick("http://127.0.0.1:1/payload.bin");
  request.attempts = 2;
  Result<OriginFetched> refused = Fetch(request);
  ASSERT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("curl error 7"), std::string::npos) << refused.status().message();
  EXPECT_EQ(Fetch(Quick("ftp://127.0.0.1/payload.bin")).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(HttpOriginTest, HeadersGoOnlyToTheUrlsOwnHostAcrossARedirect) {
  OriginRequest request = Quick(Url("redirect/localhost:" + http_->port() + "/payload.bin"));
  request.headers = {"X-Token: do-not-forward"};
  Result<OriginFetched> fetched = Fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(Written(), *payload_);
  const std::vector<std::string> first = http_->Requests("log", "redirect/localhost:" + http_->port() + "/payload.bin");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_NE(first[0].find("do-not-forward"), std::string::npos);
  const std::vector<std::string> second = http_->Requests("log", "plain/payload.bin");
  ASSERT_FALSE(second.empty());
  EXPECT_NE(second.back().find("localhost"), std::string::npos);  // the Host header: the other host
  EXPECT_EQ(second.back().find("do-not-forward"), std::string::npos) << second.back();
  request.headers = {"no colon here"};
  EXPECT_EQ(Fetch(request).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(HttpOriginTest, WithoutALengthTheSizeLimitHolds) {
  OriginRequest request = Quick(Url("chunked/payload.bin"));
  Result<OriginFetched> fetched = Fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_EQ(heads_.size(), 1u);
  EXPECT_FALSE(heads_[0].size.has_value());
  EXPECT_EQ(Written(), *payload_);
  request.size_limit = 1 << 20;
  EXPECT_EQ(Fetch(request).status().code(), StatusCode::kResourceExhausted);
}

TEST_F(HttpOriginTest, CancellingStopsAFetchPromptly) {
  std::thread canceller([this] {
    std::this_thread::sleep_for(300ms);
    cancel_ = true;
  });
  const auto start = std::chrono::steady_clock::now();
  Result<OriginFetched> fetched = Fetch(Quick(Url("slow/100000/payload.bin")));  // 31 s in full
  canceller.join();
  EXPECT_EQ(fetched.status().code(), StatusCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_GT(arrived_, 0u);
}

TEST_F(HttpOriginTest, HttpsIsVerifiedAgainstTheGivenCa) {
  ASSERT_TRUE(tls_ready_ && https_->up()) << "openssl could not make the test CA, or the TLS origin did not start";
  OriginRequest request = Quick("https://127.0.0.1:" + https_->port() + "/drop/1000000/1/payload.bin");
  Result<OriginFetched> unknown_ca = Fetch(request);
  ASSERT_EQ(unknown_ca.status().code(), StatusCode::kUnauthenticated) << unknown_ca.status().ToString();
  std::ifstream ca(*dir_ / "ca.crt");
  request.ca_pem.assign(std::istreambuf_iterator<char>(ca), {});
  ASSERT_FALSE(request.ca_pem.empty());
  Result<OriginFetched> fetched = Fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  EXPECT_EQ(fetched->resumed, 1);
  EXPECT_EQ(Written(), *payload_);
}

TEST(UrlFileName, IsTheLastPathComponentDecoded) {
  EXPECT_EQ(UrlFileName("https://host/sets/ds%20v2.bin?sig=abc#frag"), "ds v2.bin");
  EXPECT_EQ(UrlFileName("http://host:8080/data.bin"), "data.bin");
  EXPECT_EQ(UrlFileName("http://host/sets/"), "");
  EXPECT_EQ(UrlFileName("http://host"), "");
  EXPECT_EQ(UrlFileName("ftp://host/data.bin"), "");
}

}  // namespace
}  // namespace gridcast
