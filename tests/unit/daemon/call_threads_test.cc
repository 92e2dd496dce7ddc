// CallThreads: results in order, calls really at once, nested batches (a call that waits on
// calls of its own) never deadlock, and threads are reused between batches.
#include "daemon/coordinator/call_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace gridcast {
namespace {

TEST(CallThreadsTest, ResultsComeInTheItemsOrder) {
  CallThreads calls;
  const std::vector<int> items = {5, 1, 4, 2, 3};
  EXPECT_EQ(calls.ForEach<int>(items, [](int i) { return i * 10; }), (std::vector<int>{50, 10, 40, 20, 30}));
  EXPECT_TRUE(calls.ForEach<int>(std::vector<int>{}, [](int i) { return i; }).empty());
}

TEST(CallThreadsTest, CallsRunAtOnce) {
  CallThreads calls;
  // Eight calls that each wait for all eight to have started: only at once can they finish.
  std::atomic<int> started{0};
  const std::vector<int> items = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto results = calls.ForEach<bool>(items, [&](int) {
    ++started;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started < 8 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    return started == 8;
  });
  for (bool all : results) EXPECT_TRUE(all);
}

TEST(CallThreadsTest, NestedBatchesDoNotDeadlockAndThreadsAreReused) {
  CallThreads calls;
  const std::vector<int> outer = {0, 1, 2, 3};
  const std::vector<int> inner = {0, 1, 2};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  for (int round = 0; round < 20; ++round) {
    const auto sums = calls.ForEach<int>(outer, [&](int o) {
      const auto parts = calls.ForEach<int>(inner, [&](int i) {
        std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
        return o * 10 + i;
      });
      return parts[0] + parts[1] + parts[2];
    });
    ASSERT_EQ(sums, (std::vector<int>{3, 33, 63, 93}));
    // Rounds come 200 ms apart in the control tree: time for the threads to be idle again (a
    // thread fulfils its call's future just before it goes back to waiting, so a round right
    // after another may find none idle and start more).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // 20 rounds of 4 x 3 calls on a few threads, not 240 fresh ones.
  EXPECT_LE(threads.size(), 16u);
}

}  // namespace
}  // namespace gridcast
