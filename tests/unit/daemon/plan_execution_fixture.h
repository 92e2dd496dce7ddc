// The executor and the data plane in one process: every member's PlanExecution and DataPlane
// on one io_context, each member with its own store in a temporary directory, no daemons and
// no control plane; connections over real sockets on 127.0.0.1 (TCP, or TLS for the members
// given a context) or, with loopback_ set before SetUp, over the in-process loopback transport.
#pragma once


#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "collectives/registry.h"
#include "collectives/topology.h"
#include "daemon/executor/plan_execution.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/loopback/loopback_transport.h"
#include "daemon/transport/tcp/tcp_transport.h"
#include "daemon/transport/tls/tls_transport.h"
#include "test_dir.h"

namespace gridcast {

namespace fs = std::filesystem;

// kMembers members of one plan on one io_context, each with a data plane on 127.0.0.1 and a
// directory for its store; member 0 is the source.
class PlanExecutionFixture : public ::testing::Test {
 protected:
  static constexpr uint64_t kChunk = 64 << 10;
  // Small enough that forwarded chunks leave the page cache during every test's broadcast.
  static constexpr uint64_t kPageCacheWindow = 4 * kChunk;
  inline static const std::string kSecret = std::string(32, 'k');

  static std::string ReadFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  static constexpr int kMembers = 4;

  void SetUp() override {
    // Stores received into place are in memory: a tmpfs.
    dir_ = FreshTestDir("gridcast-execution", mapped_ ? "/dev/shm" : std::filesystem::temp_directory_path());
    for (int i = 0; i < kMembers; ++i) fs::create_directories(MemberDir(i));
    if (loopback_) network_ = LoopbackNetwork::Create(io_);
    // Each member's data plane asks this table for the plan's receiver.
    for (int i = 0; i < kMembers; ++i) {
      std::shared_ptr<DataTransport> transport;
      if (loopback_) {
        transport = std::make_shared<LoopbackTransport>(network_, upload_bytes_per_s_.contains(i) ? upload_bytes_per_s_.at(i) : 0);
      } else if (TlsOf(i)) {
        transport = std::make_shared<TlsTransport>(io_, TlsOf(i), TcpOptions{}, std::chrono::seconds(5));
      } else {
        transport = std::make_shared<TcpTransport>(io_, TcpOptions{});
      }
      transports_.push_back(transport);
      planes_.push_back(std::make_unique<DataPlane>(
          io_, transport, kSecret,
          [this, i](const PlanId& id) -> std::shared_ptr<LaneReceiver> {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = executions_.find(i);
            return it == executions_.end() || it->second->id() != id ? nullptr : it->second;
          },
          std::chrono::seconds(5)));
      const std::string host = loopback_ ? "m" + std::to_string(i) : "127.0.0.1";
      Result<uint16_t> port = planes_.back()->Listen(host + ":0");
      ASSERT_TRUE(port.ok()) << port.status().message();
      addresses_.push_back(host + ":" + std::to_string(*port));
    }
    runner_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    StopAll();
    work_.reset();
    io_.stop();
    if (runner_.joinable()) runner_.join();
    workers_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    executions_.clear();
    planes_.clear();
    transports_.clear();
    fs::remove_all(dir_);
  }

  // Stops every execution and waits (up to 2 s) until its coroutines let go of it.
  void StopAll() {
    std::map<int, std::shared_ptr<PlanExecution>> executions;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      executions.swap(executions_);
    }
    for (auto& [i, execution] : executions) execution->RequestStop("test over");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (auto& [i, execution] : executions) {
      while (execution.use_count() > 1 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
  }

  fs::path MemberDir(int i) const { return dir_ / ("m" + std::to_string(i)); }
  std::shared_ptr<TlsContext> TlsOf(int i) const { return i < static_cast<int>(tls_.size()) ? tls_[i] : nullptr; }

  // A payload of `bytes` random bytes at the source, and a plan of `planner` over kMembers.
  void MakePayloadAndPlan(uint64_t bytes, const std::string& planner) {
    std::string data(bytes, '\0');
    std::mt19937_64 random(bytes);
    for (char& c : data) c = static_cast<char>(random());
    source_path_ = MemberDir(0) / "payload.bin";
    std::ofstream(source_path_, std::ios::binary) << data;
    Result<NetworkModel> net = ParseTopology(
        "switches:\n  - name: s\nnodes:\n  - switch: s\n    count: 4\n    up: 1gbit\n    down: 1gbit\n");
    ASSERT_TRUE(net.ok()) << net.status().message();
    Result<std::unique_ptr<Planner>> maker = MakePlanner(planner);
    ASSERT_TRUE(maker.ok());
    PlanOptions options;
    options.chunk_bytes = kChunk;
    Result<Plan> plan = (*maker)->MakePlan(*net, bytes, options);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    plan_ = *plan;
    Result<std::unique_ptr<PayloadStore>> source = PayloadStore::OpenSource(source_path_.string(), kChunk, digest_);
    ASSERT_TRUE(source.ok()) << source.status().message();
    identity_ = (*source)->identity();
    source_ = std::move(*source);
    id_ = *PlanId::FromBytes(std::string(PlanId::kBytes, '\x07'));
    Result<SigningKey> key = SigningKey::Generate();
    ASSERT_TRUE(key.ok());
    digest_key_.emplace(std::move(*key));
  }

  // The source reads its payload as it sends it (PayloadStore::OpenStreamedSource), and the
  // members know of it only what such a plan says: no chunk list, no whole SHA-256.
  void StreamTheSource(WeakChecksums weak = WeakChecksums::kSkip) {
    Result<std::unique_ptr<PayloadStore>> source =
        PayloadStore::OpenStreamedSource(source_path_.string(), kChunk, digest_, SystemFileIo(), weak);
    ASSERT_TRUE(source.ok()) << source.status().message();
    ASSERT_NE((*source)->capabilities().streamed, nullptr);
    source_ = std::move(*source);
    member_identity_ = source_->identity();
  }

  // Member `i`'s store: the source's, or a receiving one in its directory (resuming from what
  // an earlier store there verified).
  std::shared_ptr<PayloadStore> OpenStore(int i, FileIo& io = SystemFileIo()) {
    if (i == 0) return source_;
    ReceiveOptions options;
    options.in_place = mapped_;
    options.page_cache_window_bytes = mapped_ ? 0 : kPageCacheWindow;
    Result<std::unique_ptr<PayloadStore>> store =
        PayloadStore::OpenForReceive(MemberDir(i).string(), "payload.bin",
                                     member_identity_ ? *member_identity_ : identity_, io, options);
    EXPECT_TRUE(store.ok()) << store.status().message();
    if (store.ok() && mapped_) {
      // a tmpfs: its chunks are received into place
      EXPECT_NE((*store)->capabilities().placement, nullptr);
    }
    return store.ok() ? std::shared_ptr<PayloadStore>(std::move(*store)) : nullptr;
  }

  // Makes member i's execution on `store` and starts it on the io thread, running
  // `before_start` there first.
  void StartMember(int i, std::shared_ptr<PayloadStore> store,
                   std::function<void(PlanExecution&)> before_start = nullptr) {
    ExecutionOptions options = base_options_;
    options.secret = kSecret;
    options.transport = transports_[i];
    options.reconnect_delay = std::chrono::milliseconds(20);
    options.counters = CountersOf(i);
    auto execution = std::make_shared<PlanExecution>(io_, workers_, plan_, id_, i, addresses_, store, options,
                                                     DigestStreamOf(i, *store));
    if (plan_.HasSwarm()) {
      execution->SetDigestTree(DigestTree{plan_.swarm.source, kMembers, digest_tree_fanout_});
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      executions_[i] = execution;
    }
    boost::asio::post(io_, [execution, before_start = std::move(before_start)] {
      if (before_start) before_start(*execution);
      execution->Start(std::chrono::steady_clock::now());
    });
  }

  // Member i's signed batches of digests over `store`, whose chunks are then checked against
  // them (none when the test turned them off).
  std::unique_ptr<DigestStream> DigestStreamOf(int i, PayloadStore& store) {
    if (!stream_digests_ || !digest_key_) return nullptr;
    Result<std::unique_ptr<DigestLog>> log =
        DigestLog::OpenUnnamed(MemberDir(i).string(), identity_.digest,
                               DigestBatches(identity_.chunk_bytes, identity_.NumChunks()), SystemFileIo());
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    if (!log.ok()) return nullptr;
    std::shared_ptr<DigestLog> shared = std::move(*log);
    store.ExpectDigestsFrom(shared);
    Result<std::unique_ptr<DigestStream>> stream =
        i == 0 ? DigestStream::ForSource(id_, store.identity(), *digest_key_, shared)
               : DigestStream::ForMember(id_, store.identity(), digest_key_->public_key(), shared);
    return stream.ok() ? std::move(*stream) : nullptr;
  }

  // Runs `task` on the io thread and waits for what it returns.
  template <typename T>
  T OnIo(boost::asio::awaitable<T> task) {
    return boost::asio::co_spawn(io_, std::move(task), boost::asio::use_future).get();
  }

  // Member i's daemon counters (one set per member, kept across its restarts).
  std::shared_ptr<DaemonCounters> CountersOf(int i) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<DaemonCounters>& counters = counters_[i];
    if (counters == nullptr) counters = std::make_shared<DaemonCounters>();
    return counters;
  }

  ExecutionSnapshot SnapshotOf(int i) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = executions_.find(i);
    return it == executions_.end() ? ExecutionSnapshot{} : it->second->Snapshot();
  }
  bool DoneAndVerified(int i) {
    const ExecutionSnapshot s = SnapshotOf(i);
    return s.state == ExecutionState::kDone && s.digest == identity_.ListDigest();
  }

  // Polls `condition` until it holds (true) or 30 s pass (false).
  static bool WaitUntil(const std::function<bool()>& condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  // Waits until every receiver is done (false when one failed, or after 30 s).
  bool WaitAllDone() {
    bool failed = false;
    const bool done = WaitUntil([&] {
      bool all = true;
      for (int i = 1; i < kMembers && !failed; ++i) {
        const ExecutionSnapshot s = SnapshotOf(i);
        if (s.state == ExecutionState::kFailed) {
          ADD_FAILURE() << "member " << i << " failed: " << s.error;
          failed = true;
        }
        all = all && DoneAndVerified(i);
      }
      return all || failed;
    });
    return done && !failed;
  }

  void ExpectEveryCopy() {
    const std::string expected = ReadFile(source_path_);
    for (int i = 1; i < kMembers; ++i) {
      EXPECT_EQ(ReadFile(MemberDir(i) / "payload.bin"), expected) << "member " << i;
    }
  }

  fs::path dir_;
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ = boost::asio::make_work_guard(io_);
  boost::asio::thread_pool workers_{2};
  std::thread runner_;
  std::vector<std::shared_ptr<TlsContext>> tls_;  // per member, set before SetUp; none: plaintext
  bool loopback_ = false;                          // set before SetUp: no sockets at all
  std::map<int, double> upload_bytes_per_s_;       // loopback only, set before SetUp: slow uplinks
  bool mapped_ = false;                            // receivers take chunks into place (in-memory)
  ExecutionOptions base_options_;                  // what StartMember starts from
  bool stream_digests_ = true;                     // executions carry signed batches of digests
  int digest_tree_fanout_ = 2;                     // plans with a swarm: the digest tree's
  std::shared_ptr<LoopbackNetwork> network_;
  std::vector<std::shared_ptr<DataTransport>> transports_;
  std::vector<std::unique_ptr<DataPlane>> planes_;
  std::vector<std::string> addresses_;
  std::mutex mutex_;
  std::map<int, std::shared_ptr<PlanExecution>> executions_;  // guarded by mutex_
  std::map<int, std::shared_ptr<DaemonCounters>> counters_;   // guarded by mutex_
  fs::path source_path_;
  Plan plan_;
  PayloadIdentity identity_;  // the payload's, every digest listed
  std::optional<PayloadIdentity> member_identity_;  // what the plan tells members, where not identity_
  ChunkDigest digest_ = ChunkDigest::kSha256;  // of the plan, set before MakePayloadAndPlan
  std::shared_ptr<PayloadStore> source_;
  PlanId id_{};
  std::optional<SigningKey> digest_key_;  // the source's, made with the plan
};

// The transports and digests every executor behaviour is run over: sockets and the in-process
// loopback, each with both chunk digests.
struct ExecutionVariant {
  bool loopback = false;
  ChunkDigest digest = ChunkDigest::kSha256;
  bool mapped = false;  // receivers' stores mapped (in-memory payloads: received into place)
};

inline std::string ExecutionVariantName(const ::testing::TestParamInfo<ExecutionVariant>& variant) {
  return std::string(variant.param.loopback ? "loopback_" : "tcp_") + std::string(DigestName(variant.param.digest)) +
         (variant.param.mapped ? "_in_place" : "");
}

class ExecutionVariantFixture : public PlanExecutionFixture, public ::testing::WithParamInterface<ExecutionVariant> {
 protected:
  void SetUp() override {
    loopback_ = GetParam().loopback;
    digest_ = GetParam().digest;
    mapped_ = GetParam().mapped;
    PlanExecutionFixture::SetUp();
  }
};

#define GRIDCAST_EXECUTION_VARIANTS(suite)                                                                  \
  INSTANTIATE_TEST_SUITE_P(Variants, suite,                                                                 \
                           ::testing::Values(ExecutionVariant{false, ChunkDigest::kSha256},                 \
                                             ExecutionVariant{false, ChunkDigest::kXxh3},                   \
                                             ExecutionVariant{true, ChunkDigest::kSha256},                  \
                                             ExecutionVariant{true, ChunkDigest::kXxh3},                    \
                                             ExecutionVariant{false, ChunkDigest::kSha256, true},           \
                                             ExecutionVariant{true, ChunkDigest::kXxh3, true}),             \
                           ExecutionVariantName)

}  // namespace gridcast
