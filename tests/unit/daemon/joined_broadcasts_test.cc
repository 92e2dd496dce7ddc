// JoinedBroadcasts: a second identical request follows the first broadcast (its reports from
// then on, its outcome) instead of running again; a different broadcast of a running name is
// refused; requests without a key never join. Threads stand in for gRPC handler threads.
#include "daemon/coordinator/joined_broadcasts.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/daemon/test_dir.h"

namespace gridcast {
namespace {

using Report = JoinedBroadcasts::Report;

v1::BroadcastProgress Progress(uint64_t chunks, bool finished = false) {
  v1::BroadcastProgress progress;
  progress.set_chunks_done_total(chunks);
  progress.set_finished(finished);
  return progress;
}

// A broadcast that reports when told to and ends with `outcome` when released.
class HeldBroadcast {
 public:
  explicit HeldBroadcast(Status outcome) : outcome_(std::move(outcome)) {}
  Status Run(const Report& publish) {
    runs_.fetch_add(1);
    publish_ = publish;
    started_.set_value();
    release_.get_future().wait();
    publish(Progress(100, true));
    return outcome_;
  }
  void WaitStarted() { started_future_.wait(); }
  // A report while it runs (after WaitStarted).
  void Publish(uint64_t chunks) { publish_(Progress(chunks)); }
  void Release() { release_.set_value(); }
  int runs() const { return runs_.load(); }

 private:
  Status outcome_;
  std::atomic<int> runs_{0};
  Report publish_;
  std::promise<void> started_;
  std::shared_future<void> started_future_ = started_.get_future().share();
  std::promise<void> release_;
};

TEST(JoinedBroadcastsTest, AnIdenticalRequestFollowsTheRunningOneToItsOutcome) {
  JoinedBroadcasts joined;
  HeldBroadcast broadcast(Status::DataLoss("member m2's copy differs"));
  std::atomic<uint64_t> first_last{0};
  std::future<Status> first = std::async(std::launch::async, [&] {
    return joined.RunOrJoin(
        "key", "data.bin", [&](const v1::BroadcastProgress& p) { first_last = p.chunks_done_total(); },
        [&](const Report& publish) { return broadcast.Run(publish); });
  });
  broadcast.WaitStarted();

  std::atomic<int> second_reports{0};
  std::atomic<uint64_t> second_last{0};
  std::future<Status> second = std::async(std::launch::async, [&] {
    return joined.RunOrJoin(
        "key", "data.bin",
        [&](const v1::BroadcastProgress& p) {
          second_last = p.chunks_done_total();
          second_reports.fetch_add(1);
        },
        [&](const Report& publish) { return broadcast.Run(publish); });
  });
  // The running broadcast reports until the second request hears it: it has joined.
  for (uint64_t chunks = 1; second_reports == 0; ++chunks) {
    ASSERT_LT(chunks, 2000u) << "the identical request never followed the running broadcast";
    broadcast.Publish(chunks);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(20)), std::future_status::timeout)
      << "the joined request returned before the broadcast ended";
  broadcast.Release();

  EXPECT_EQ(first.get().code(), StatusCode::kDataLoss);
  const Status followed = second.get();
  EXPECT_EQ(followed.code(), StatusCode::kDataLoss);
  EXPECT_EQ(followed.message(), "member m2's copy differs");
  EXPECT_EQ(broadcast.runs(), 1);
  EXPECT_EQ(first_last, 100u);
  EXPECT_EQ(second_last, 100u);
}

TEST(JoinedBroadcastsTest, ADifferentBroadcastOfARunningNameIsRefusedAndTheNameIsFreeAfter) {
  JoinedBroadcasts joined;
  HeldBroadcast broadcast(Status::Ok());
  std::future<Status> first = std::async(std::launch::async, [&] {
    return joined.RunOrJoin("key-a", "data.bin", [](const v1::BroadcastProgress&) {},
                            [&](const Report& publish) { return broadcast.Run(publish); });
  });
  broadcast.WaitStarted();
  int other_runs = 0;
  const auto other = [&](const Report&) {
    ++other_runs;
    return Status::Ok();
  };
  const Status refused = joined.RunOrJoin("key-b", "data.bin", [](const v1::BroadcastProgress&) {}, other);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("a different broadcast of 'data.bin' runs from this daemon"), std::string::npos)
      << refused.ToString();
  // Another name runs beside it.
  EXPECT_TRUE(joined.RunOrJoin("key-c", "other.bin", [](const v1::BroadcastProgress&) {}, other).ok());
  EXPECT_EQ(other_runs, 1);
  broadcast.Release();
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(joined.RunOrJoin("key-b", "data.bin", [](const v1::BroadcastProgress&) {}, other).ok());
  EXPECT_EQ(other_runs, 2);
}

TEST(JoinedBroadcastsTest, RequestsWithoutAKeyRunEachTime) {
  JoinedBroadcasts joined;
  int runs = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(joined.RunOrJoin("", "probe", [](const v1::BroadcastProgress&) {}, [&](const Report&) {
                        ++runs;
                        return Status::Ok();
                      }).ok());
  }
  EXPECT_EQ(runs, 3);
}

TEST(JoinedBroadcastsTest, TheKeyTellsAChangedFileAndOtherOptionsApart) {
  const std::filesystem::path dir = FreshTestDir("joined-broadcasts");
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "data.bin";
  std::ofstream(file) << "first contents";
  v1::BroadcastRequest request;
  const std::vector<std::string> members = {"m0", "m1"};
  const std::string key = SameBroadcastKey(request, file, "data.bin", members);
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(SameBroadcastKey(request, file, "data.bin", members), key);
  EXPECT_NE(SameBroadcastKey(request, file, "data.bin", {"m0", "m2"}), key);
  EXPECT_NE(SameBroadcastKey(request, file, "copy.bin", members), key);
  v1::BroadcastRequest other = request;
  other.set_in_memory(true);
  EXPECT_NE(SameBroadcastKey(other, file, "data.bin", members), key);
  std::ofstream(file) << "changed contents, longer";
  EXPECT_NE(SameBroadcastKey(request, file, "data.bin", members), key);
  v1::BroadcastRequest probe = request;
  probe.set_probe_bytes(1 << 20);
  EXPECT_EQ(SameBroadcastKey(probe, file, "data.bin", members), "");
  EXPECT_EQ(SameBroadcastKey(request, dir / "missing.bin", "data.bin", members), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gridcast
