#include "deploy/process_cpu.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
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
  // A thread of this process works about 0.3 s while this one waits: the working thread's CPU
  // shows under its own id, not under this one's.
  std::atomic<pid_t> worker_id{0};
  std::thread worker([&] {
    worker_id = gettid();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    volatile uint64_t sink = 0;
    while (std::chrono::steady_clock::now() < until) sink = sink + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // alive while it is read
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  Result<std::map<int, double>> threads = ThreadCpuSeconds(getpid());
  worker.join();
  ASSERT_TRUE(threads.ok()) << threads.status().ToString();
  ASSERT_EQ(threads->count(worker_id.load()), 1u);
  ASSERT_EQ(threads->count(gettid()), 1u);
  EXPECT_GE(threads->at(worker_id.load()), 0.2);
  EXPECT_LT(threads->at(gettid()), threads->at(worker_id.load()));
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
