#include "deploy/process_cpu.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <limits>
#include <map>
#include <thread>

namespace gridcast {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(ProcessCpu, CountsThisProcessWorking) {
  Result<double> before = ProcessCpuSeconds(getpid());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20'000'000; ++i) sink = sink + i * i;
  Result<double> after = ProcessCpuSeconds(getpid());
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  // Nanoseconds, not 10 ms clock ticks: a few milliseconds of work show.
  EXPECT_GT(*after, *before);
}

TEST(ProcessCpu, NoProcessIsNotFound) {
  // A child that ended and was reaped: its pid names no process (until the kernel reuses it).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_EQ(ProcessCpuSeconds(child).status().code(), StatusCode::kNotFound);
  // Not pids at all, which a clock id would turn into this process or another one.
  for (int pid : {0, -1, INT_MAX, (1 << 22) + 1}) {
    EXPECT_EQ(ProcessCpuSeconds(pid).status().code(), StatusCode::kNotFound) << pid;
  }
}

TEST(ProcessCpu, CountsEachThreadApart) {
  // A thread of this process works 0.3 CPU-seconds (its own clock, however busy the machine)
  // while this one waits: the work shows under the working thread's id, not under this one's.
  Result<std::map<int, double>> before = ThreadCpuSeconds(getpid());
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ(before->count(gettid()), 1u);
  std::atomic<pid_t> worker_id{0};
  std::atomic<bool> worked{false}, read{false};
  std::thread worker([&] {
    worker_id = gettid();
    volatile uint64_t sink = 0;
    timespec used{};
    do {
      for (int i = 0; i < 100'000; ++i) sink = sink + 1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
    } while (used.tv_sec == 0 && used.tv_nsec < 300'000'000);
    worked = true;
    while (!read) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // alive while it is read
  });
  while (!worked) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Result<std::map<int, double>> threads = ThreadCpuSeconds(getpid());
  read = true;
  worker.join();
  ASSERT_TRUE(threads.ok()) << threads.status().ToString();
  ASSERT_EQ(threads->count(worker_id.load()), 1u);
  ASSERT_EQ(threads->count(gettid()), 1u);
  EXPECT_GE(threads->at(worker_id.load()), 0.28);  // clock ticks: rounded down
  // This thread only waited meanwhile (the tests before it ran on it: count from here).
  EXPECT_LT(threads->at(gettid()) - before->at(gettid()), 0.1);
  EXPECT_EQ(ThreadCpuSeconds(0).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ThreadCpuSeconds(INT_MAX).status().code(), StatusCode::kNotFound);
}

TEST(CpuPerGib, MedianAndMaxOfEachNodesCpuPerGibReceived) {
  // A broadcast's receivers: a whole GiB each.
  Result<CpuPerGib> odd = SummarizeCpuPerGib({{"a", 3.0, kGiB}, {"b", 1.0, kGiB}, {"c", 2.0, kGiB}});
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  EXPECT_DOUBLE_EQ(odd->median, 2.0);
  EXPECT_DOUBLE_EQ(odd->max, 3.0);
  // An even count: the mean of the middle two.
  Result<CpuPerGib> even = SummarizeCpuPerGib({{"a", 4.0, kGiB}, {"b", 1.0, kGiB}, {"c", 2.0, kGiB}, {"d", 3.0, kGiB}});
  ASSERT_TRUE(even.ok());
  EXPECT_DOUBLE_EQ(even->median, 2.5);
  EXPECT_DOUBLE_EQ(even->max, 4.0);
  // Each node by what it received: an allgather of 4 nodes, 1 GiB in all, receives 3/4 GiB.
  Result<CpuPerGib> allgather = SummarizeCpuPerGib({{"a", 0.75, 3 * kGiB / 4}, {"b", 1.5, 3 * kGiB / 4}});
  ASSERT_TRUE(allgather.ok());
  EXPECT_DOUBLE_EQ(allgather->median, 1.5);
  EXPECT_DOUBLE_EQ(allgather->max, 2.0);
  EXPECT_DOUBLE_EQ(CpuSecondsPerGib({"x", 0.5, 256u << 20}), 2.0);
}

TEST(CpuPerGib, RefusesWhatIsNoMeasurement) {
  EXPECT_EQ(SummarizeCpuPerGib({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SummarizeCpuPerGib({{"a", 1.0, kGiB}, {"b", 1.0, 0}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SummarizeCpuPerGib({{"a", -0.1, kGiB}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SummarizeCpuPerGib({{"a", std::numeric_limits<double>::quiet_NaN(), kGiB}}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
