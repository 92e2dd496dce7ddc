// The executor and the data plane in one process: every member's PlanExecution and DataPlane
// on one io_context, each member with its own store in a temporary directory, real sockets on
// 127.0.0.1, no daemons and no control plane. What a broadcast does between Start and done,
// and how a member resumes from what it verified.
#include "daemon/executor/plan_execution.h"

#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "collectives/registry.h"
#include "collectives/topology.h"
#include "daemon/transport/data_plane.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kChunk = 64 << 10;
const std::string kSecret(32, 'k');

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class PlanExecutionTest : public ::testing::Test {
 protected:
  static constexpr int kMembers = 4;

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gridcast-execution-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    for (int i = 0; i < kMembers; ++i) fs::create_directories(MemberDir(i));
    // Each member's data plane asks this table for the plan's receiver.
    for (int i = 0; i < kMembers; ++i) {
      planes_.push_back(std::make_unique<DataPlane>(
          io_, kSecret,
          [this, i](const PlanId& id) -> std::shared_ptr<LaneReceiver> {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = executions_.find(i);
            return it == executions_.end() || it->second->id() != id ? nullptr : it->second;
          },
          std::chrono::seconds(5)));
      Result<uint16_t> port = planes_.back()->Listen("127.0.0.1:0");
      ASSERT_TRUE(port.ok()) << port.status().message();
      addresses_.push_back("127.0.0.1:" + std::to_string(*port));
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
    Result<std::unique_ptr<PayloadStore>> source = PayloadStore::OpenSource(source_path_.string(), kChunk);
    ASSERT_TRUE(source.ok()) << source.status().message();
    identity_ = (*source)->identity();
    source_ = std::move(*source);
    id_.fill(7);
  }

  // Member `i`'s store: the source's, or a receiving one in its directory (resuming from what
  // an earlier store there verified).
  std::shared_ptr<PayloadStore> OpenStore(int i) {
    if (i == 0) return source_;
    Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive(MemberDir(i).string(), "payload.bin", identity_);
    EXPECT_TRUE(store.ok()) << store.status().message();
    return store.ok() ? std::shared_ptr<PayloadStore>(std::move(*store)) : nullptr;
  }

  // Makes member i's execution on `store` and starts it on the io thread.
  void StartMember(int i, std::shared_ptr<PayloadStore> store) {
    ExecutionOptions options;
    options.secret = kSecret;
    options.reconnect_delay = std::chrono::milliseconds(20);
    auto execution = std::make_shared<PlanExecution>(io_, workers_, plan_, id_, i, addresses_, std::move(store), options);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      executions_[i] = execution;
    }
    boost::asio::post(io_, [execution] { execution->Start(std::chrono::steady_clock::now()); });
  }

  // Waits until every receiver is done (or one failed, or 30 s passed).
  bool WaitAllDone() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      bool all = true;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int i = 1; i < kMembers; ++i) {
          auto it = executions_.find(i);
          const ExecutionSnapshot s = it == executions_.end() ? ExecutionSnapshot{} : it->second->Snapshot();
          if (s.state == ExecutionState::kFailed) {
            ADD_FAILURE() << "member " << i << " failed: " << s.error;
            return false;
          }
          all = all && s.state == ExecutionState::kDone && s.digest == ChunkListDigest(identity_.chunk_hashes);
        }
      }
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
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
  std::vector<std::unique_ptr<DataPlane>> planes_;
  std::vector<std::string> addresses_;
  std::mutex mutex_;
  std::map<int, std::shared_ptr<PlanExecution>> executions_;  // guarded by mutex_
  fs::path source_path_;
  Plan plan_;
  PayloadIdentity identity_;
  std::shared_ptr<PayloadStore> source_;
  PlanId id_{};
};

TEST_F(PlanExecutionTest, EveryPlannerDeliversEveryChunkToEveryMember) {
  for (const std::string planner : {"binary", "chain", "multilane", "splitstream:2", "flat"}) {
    SCOPED_TRACE(planner);
    MakePayloadAndPlan(37 * kChunk + 11, planner);
    for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
    ASSERT_TRUE(WaitAllDone());
    ExpectEveryCopy();
    StopAll();
    for (int i = 1; i < kMembers; ++i) {
      fs::remove_all(MemberDir(i));
      fs::create_directories(MemberDir(i));
    }
    id_[0]++;
  }
}

// A member that verified some chunks before it went down resumes from them; a chunk whose
// bytes changed on disk meanwhile is found when the store reopens and is received again, so
// the copy ends equal to the source's.
TEST_F(PlanExecutionTest, AMemberResumesFromWhatItVerifiedAndReReceivesWhatChanged) {
  MakePayloadAndPlan(40 * kChunk, "binary");
  const int resumed = 3;
  const std::string data = ReadFile(source_path_);
  {
    std::shared_ptr<PayloadStore> before = OpenStore(resumed);
    ASSERT_NE(before, nullptr);
    for (uint64_t c = 0; c < 40; c += 2) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(data.data()) + c * kChunk;
      ASSERT_TRUE(before->WriteChunk(c, {bytes, kChunk}).ok());
    }
  }  // the member goes down with 20 chunks verified
  // Chunk 4's bytes change on disk while it is down.
  const fs::path part = MemberDir(resumed) / "payload.bin.part";
  ASSERT_TRUE(fs::exists(part));
  {
    std::fstream file(part, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4 * kChunk + 100);
    file.put('\x5a');
  }
  std::shared_ptr<PayloadStore> after = OpenStore(resumed);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->VerifiedCount(), 19u);  // 20 verified, one no longer hashes right
  EXPECT_FALSE(after->Has(4));
  EXPECT_TRUE(after->Has(6));
  for (int i = 0; i < kMembers; ++i) StartMember(i, i == resumed ? after : OpenStore(i));
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

// A member whose data plane knows no receiver yet (its daemon is still preparing) refuses its
// parents; they retry, and the broadcast completes once it has one.
TEST_F(PlanExecutionTest, ParentsRetryAChildThatIsNotReadyYet) {
  MakePayloadAndPlan(9 * kChunk + 1, "chain");
  for (int i = 0; i < kMembers; ++i) {
    if (i != 2) StartMember(i, OpenStore(i));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  StartMember(2, OpenStore(2));
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

}  // namespace
}  // namespace gridcast
