// ExportTorrent and ServeTo (interop with standard BitTorrent clients) against real gridcastd
// processes on loopback: what they refuse (names that leave the data directory, missing
// payloads, bad piece sizes and addresses, wrong secrets), the bound on serves, Status and
// Cancel, timeouts, and the gridcast commands' exit codes. With aria2c installed, a serve also
// delivers on loopback (the netgrid test covers clients in their own namespace).
#include <gtest/gtest.h>

#include <csignal>
#include <future>
#include <thread>

#include "cluster/control_client.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

constexpr uint64_t kHeldBytes = (1u << 20) + 3;  // 17 pieces of 64 KiB (the default), the last short

class InteropTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new LocalCluster(GRIDCASTD, "interop", 2);
    const fs::path data = cluster_->data_dir(0);
    // Payloads the daemon holds, and ways out of its data directory.
    fs::rename(cluster_->MakePayload("held.bin", kHeldBytes), data / "held.bin");
    fs::create_directories(data / "sub");
    fs::copy_file(data / "held.bin", data / "sub" / "inner.bin");
    fs::copy_file(data / "held.bin", data / "partial.bin.part");
    const std::string outside = cluster_->MakePayload("outside.bin", 4096);
    fs::create_symlink(outside, data / "link.bin");
    fs::create_directory_symlink(cluster_->dir() / "payloads", data / "linkdir");
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  static ControlClient Client(const std::string& secret = "") {
    const ClusterMember& m = cluster_->config().members[0];
    return ControlClient(m.control_address, secret.empty() ? cluster_->config().secret : secret);
  }

  static Status Export(const std::string& name, uint64_t piece_bytes, v1::ExportTorrentResponse* response = nullptr) {
    v1::ExportTorrentRequest request;
    request.set_name(name);
    request.set_piece_bytes(piece_bytes);
    v1::ExportTorrentResponse ignored;
    return Client().ExportTorrent(request, response ? response : &ignored);
  }

  static Status Serve(const std::string& name, const std::string& address, uint64_t piece_bytes, double timeout_s,
                      v1::ServeToResponse* response = nullptr) {
    v1::ServeToRequest request;
    request.set_name(name);
    request.set_address(address);
    request.set_piece_bytes(piece_bytes);
    request.set_timeout_s(timeout_s);
    v1::ServeToResponse ignored;
    return Client().ServeTo(request, std::chrono::seconds(60), response ? response : &ignored);
  }

  // A loopback port nobody listens on, from this cluster's private block of 16 (see
  // LocalCluster: two members use the first 2 and 8 and 9); offset 0 to 5.
  static std::string SpareAddress(int offset) {
    const std::string& data = cluster_->config().members[0].data_address;
    const int base = std::stoi(data.substr(data.rfind(':') + 1));
    return "127.0.0.1:" + std::to_string(base + 10 + offset);
  }

  static CommandOutput Cli(std::vector<std::string> args) {
    args.insert(args.begin(), GRIDCAST_CLI);
    Result<CommandOutput> out = RunCommand(args);
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : CommandOutput{};
  }

  static LocalCluster* cluster_;
};
LocalCluster* InteropTest::cluster_ = nullptr;

TEST_F(InteropTest, ExportRefusesNamesOutsideTheDataDirectoryAndBadPieceSizes) {
  const struct {
    std::string name;
    uint64_t piece_bytes;
    StatusCode code;
  } cases[] = {
      {"../payloads/outside.bin", 0, StatusCode::kInvalidArgument},
      {"sub/../held.bin", 0, StatusCode::kInvalidArgument},
      {"/etc/passwd", 0, StatusCode::kInvalidArgument},
      {"", 0, StatusCode::kInvalidArgument},
      {"link.bin", 0, StatusCode::kInvalidArgument},             // a symlink to a file outside
      {"linkdir/outside.bin", 0, StatusCode::kInvalidArgument},  // through a symlinked directory
      {".gridcast/state/x", 0, StatusCode::kInvalidArgument},
      {"partial.bin.part", 0, StatusCode::kInvalidArgument},     // still being received
      {"partial.bin", 0, StatusCode::kNotFound},
      {"missing.bin", 0, StatusCode::kNotFound},
      {"sub", 0, StatusCode::kInvalidArgument},                  // a directory
      {"held.bin", 100000, StatusCode::kInvalidArgument},        // not a power of two
      {"held.bin", 8192, StatusCode::kInvalidArgument},          // below 16 KiB
      {"held.bin", 128u << 20, StatusCode::kInvalidArgument},    // above 64 MiB
  };
  for (const auto& c : cases) {
    Status s = Export(c.name, c.piece_bytes);
    EXPECT_EQ(s.code(), c.code) << "'" << c.name << "' piece " << c.piece_bytes << ": " << s.ToString();
    EXPECT_FALSE(s.message().empty());
  }
}

TEST_F(InteropTest, ExportGivesTheSameTorrentEveryTimeForOnePieceSize) {
  v1::ExportTorrentResponse first, second, small;
  ASSERT_TRUE(Export("held.bin", 0, &first).ok());
  EXPECT_EQ(first.size_bytes(), kHeldBytes);
  EXPECT_EQ(first.piece_bytes(), 64u << 10);  // the swarm planner's default for 1 MiB
  EXPECT_EQ(first.torrent().front(), 'd');
  EXPECT_NE(first.torrent().find("6:pieces340:"), std::string::npos) << "17 SHA-1 piece hashes";
  EXPECT_NE(first.torrent().find("4:name8:held.bin"), std::string::npos);
  EXPECT_EQ(first.magnet().rfind("magnet:?xt=urn:btih:", 0), 0u) << first.magnet();
  ASSERT_TRUE(Export("held.bin", 0, &second).ok());
  EXPECT_EQ(first.magnet(), second.magnet());
  ASSERT_TRUE(Export("held.bin", 16 << 10, &small).ok());
  EXPECT_EQ(small.piece_bytes(), 16u << 10);
  EXPECT_NE(small.magnet(), first.magnet());
  v1::ExportTorrentResponse inner;
  ASSERT_TRUE(Export("sub/inner.bin", 0, &inner).ok());
  EXPECT_NE(inner.torrent().find("4:name9:inner.bin"), std::string::npos) << "the last path component";
}

TEST_F(InteropTest, ServeToRefusesBadRequestsBeforeReadingThePayload) {
  const struct {
    std::string name, address;
    uint64_t piece_bytes;
    double timeout_s;
    StatusCode code;
  } cases[] = {
      {"held.bin", "", 0, 1, StatusCode::kInvalidArgument},
      {"held.bin", "127.0.0.1", 0, 1, StatusCode::kInvalidArgument},
      {"held.bin", "1.2.3:77", 0, 1, StatusCode::kInvalidArgument},
      {"held.bin", "localhost:6881", 0, 1, StatusCode::kInvalidArgument},  // the daemon dials IPs only
      {"held.bin", "127.0.0.1:99999", 0, 1, StatusCode::kInvalidArgument},
      {"../payloads/outside.bin", SpareAddress(0), 0, 1, StatusCode::kInvalidArgument},
      {"link.bin", SpareAddress(0), 0, 1, StatusCode::kInvalidArgument},
      {"missing.bin", SpareAddress(0), 0, 1, StatusCode::kNotFound},
      {"held.bin", SpareAddress(0), 12345, 1, StatusCode::kInvalidArgument},
      {"held.bin", SpareAddress(0), 0, -1, StatusCode::kInvalidArgument},
  };
  for (const auto& c : cases) {
    Status s = Serve(c.name, c.address, c.piece_bytes, c.timeout_s);
    EXPECT_EQ(s.code(), c.code) << "'" << c.name << "' to '" << c.address << "': " << s.ToString();
  }
}

TEST_F(InteropTest, ServeToTimesOutWhenNoClientListensAndCanRunAgainAtOnce) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    Status s = Serve("held.bin", SpareAddress(1), 0, 1.0);
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
    EXPECT_NE(s.message().find("had 0 of 17 pieces"), std::string::npos) << s.message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
}

TEST_F(InteropTest, ServesAreBoundedListedAndCancelled) {
  // Different piece sizes make different torrents; the same torrent is served once at a time.
  std::vector<std::future<Status>> serves;
  for (uint64_t piece : {16u << 10, 32u << 10, 64u << 10}) {
    serves.push_back(std::async(std::launch::async, [piece] { return Serve("held.bin", SpareAddress(2), piece, 60); }));
  }
  v1::StatusResponse status;
  for (int attempt = 0; attempt < 100; ++attempt) {
    ASSERT_TRUE(Client().GetStatus(v1::StatusRequest(), &status).ok());
    if (status.serves_size() == 3 && status.serves(0).state() == v1::SERVE_STATE_DIALLING &&
        status.serves(1).state() == v1::SERVE_STATE_DIALLING && status.serves(2).state() == v1::SERVE_STATE_DIALLING) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(status.serves_size(), 3);
  EXPECT_EQ(Serve("held.bin", SpareAddress(3), 16u << 10, 60).code(), StatusCode::kAlreadyExists);
  serves.push_back(std::async(std::launch::async, [] { return Serve("held.bin", SpareAddress(2), 128u << 10, 60); }));
  for (int attempt = 0; attempt < 100 && status.serves_size() < 4; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(Client().GetStatus(v1::StatusRequest(), &status).ok());
  }
  ASSERT_EQ(status.serves_size(), 4);
  const Status fifth = Serve("held.bin", SpareAddress(2), 256u << 10, 60);
  EXPECT_EQ(fifth.code(), StatusCode::kResourceExhausted) << fifth.ToString();
  for (const v1::ServeStatus& serve : status.serves()) {
    EXPECT_EQ(serve.name(), "held.bin");
    EXPECT_EQ(serve.address(), SpareAddress(2));
    EXPECT_EQ(serve.client_pieces(), 0u);
    v1::CancelRequest cancel;
    cancel.set_plan_id(serve.serve_id());
    EXPECT_TRUE(Client().Cancel(cancel).ok());
  }
  for (auto& serve : serves) {
    ASSERT_EQ(serve.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const Status s = serve.get();
    EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  }
  ASSERT_TRUE(Client().GetStatus(v1::StatusRequest(), &status).ok());
  EXPECT_EQ(status.serves_size(), 0);
  v1::CancelRequest unknown;
  unknown.set_plan_id(std::string(16, 'x'));
  EXPECT_EQ(Client().Cancel(unknown).code(), StatusCode::kNotFound);
}

TEST_F(InteropTest, InterruptingServeToEndsTheServe) {
  auto serves = [] {
    v1::StatusResponse status;
    EXPECT_TRUE(Client().GetStatus(v1::StatusRequest(), &status).ok());
    return status.serves_size();
  };
  Result<ChildProcess> cli = ChildProcess::Start(
      {GRIDCAST_CLI, "serve-to", SpareAddress(3), "held.bin", "--cluster", cluster_->cluster_file()},
      (cluster_->dir() / "interrupted.log").string());
  ASSERT_TRUE(cli.ok());
  for (int attempt = 0; attempt < 100 && serves() == 0; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(serves(), 1);
  cli->Stop(SIGINT);
  for (int attempt = 0; attempt < 100 && serves() > 0; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(serves(), 0) << "the daemon kept serving for a caller that went away";
}

TEST_F(InteropTest, BothCallsNeedTheClusterSecret) {
  ControlClient stranger = Client(std::string(32, 'k'));
  v1::ExportTorrentRequest export_request;
  export_request.set_name("held.bin");
  v1::ExportTorrentResponse exported;
  EXPECT_EQ(stranger.ExportTorrent(export_request, &exported).code(), StatusCode::kUnauthenticated);
  v1::ServeToRequest serve_request;
  serve_request.set_name("held.bin");
  serve_request.set_address(SpareAddress(0));
  v1::ServeToResponse served;
  EXPECT_EQ(stranger.ServeTo(serve_request, std::chrono::seconds(10), &served).code(), StatusCode::kUnauthenticated);
}

TEST_F(InteropTest, CommandsWriteTheTorrentAndExitTwoOnBadArguments) {
  const std::string cluster = cluster_->cluster_file();
  const std::string torrent = (cluster_->dir() / "held.torrent").string();
  CommandOutput out = Cli({"torrent", "export", "held.bin", "-o", torrent, "--cluster", cluster});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  v1::ExportTorrentResponse rpc;
  ASSERT_TRUE(Export("held.bin", 0, &rpc).ok());
  EXPECT_NE(out.output.find(rpc.magnet()), std::string::npos) << out.output;
  EXPECT_NE(ReadFile(torrent).find("4:name8:held.bin"), std::string::npos);

  const std::vector<std::vector<std::string>> bad = {
      {"torrent", "export", "held.bin", "--cluster", cluster},  // no -o
      {"torrent", "export", "missing.bin", "-o", torrent, "--cluster", cluster},
      {"torrent", "export", "held.bin", "-o", torrent, "--cluster", cluster, "--piece", "lots"},
      {"torrent", "export", "held.bin", "-o", torrent, "--cluster", cluster, "--piece", "100KiB"},
      {"torrent", "export", "held.bin", "-o", torrent, "--cluster", cluster, "--member", "nobody"},
      {"serve-to", "not-an-address", "held.bin", "--cluster", cluster},
      {"serve-to", SpareAddress(4), "../x", "--cluster", cluster, "--member", "m0"},
      {"serve-to", SpareAddress(4), "held.bin", "--cluster", cluster, "--timeout", "-3"},
      {"serve-to", SpareAddress(4), "held.bin"},  // no --cluster
  };
  for (const auto& args : bad) {
    out = Cli(args);
    EXPECT_EQ(out.exit_code, 2) << JoinCommand(args) << "\n" << out.output;
    EXPECT_NE(out.output.find("gridcast: "), std::string::npos) << out.output;
  }
  out = Cli({"serve-to", SpareAddress(4), "held.bin", "--cluster", cluster, "--timeout", "1"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("timed out"), std::string::npos) << out.output;
}

TEST_F(InteropTest, Aria2cOnLoopbackGetsAByteIdenticalCopy) {
  Result<CommandOutput> which = RunCommand({"sh", "-c", "command -v aria2c"});
  if (!which.ok() || which->exit_code != 0) GTEST_SKIP() << "aria2c is not installed";
  const std::string cluster = cluster_->cluster_file();
  const fs::path torrent = cluster_->dir() / "aria2c.torrent";
  const fs::path out = cluster_->dir() / "aria2c";
  fs::create_directories(out);
  ASSERT_EQ(Cli({"torrent", "export", "held.bin", "-o", torrent.string(), "--cluster", cluster}).exit_code, 0);
  const std::string address = SpareAddress(5);
  Result<ChildProcess> aria2c = ChildProcess::Start(
      {"aria2c", "--enable-dht=false", "--bt-enable-lpd=false", "--enable-peer-exchange=false",
       "--listen-port=" + address.substr(address.rfind(':') + 1), "--seed-time=0", "--file-allocation=none",
       "--stop=60", "-d", out.string(), torrent.string()},
      (cluster_->dir() / "aria2c.log").string());
  ASSERT_TRUE(aria2c.ok());
  CommandOutput served = Cli({"serve-to", address, "held.bin", "--cluster", cluster, "--timeout", "60"});
  EXPECT_EQ(served.exit_code, 0) << served.output;
  EXPECT_NE(served.output.find("has all 17 pieces"), std::string::npos) << served.output;
  EXPECT_EQ(aria2c->Wait(), 0);
  EXPECT_EQ(FileSha256(out / "held.bin"), FileSha256(cluster_->data_dir(0) / "held.bin"));
}

}  // namespace
}  // namespace gridcast
