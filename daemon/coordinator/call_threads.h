// CallThreads: threads for the calls a daemon makes to several peers at once, reused from one
// batch to the next. A progress round of the control tree every 200 ms would otherwise start a
// thread per child each time (measured: enough, under AddressSanitizer, to slow a relaying
// member's own transfers). The pool grows whenever every thread is busy, because a call may
// wait on calls of its own (stepping around a silent child), so it never deadlocks; a thread
// idle for a while ends. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace gridcast {

class CallThreads {
 public:
  CallThreads() : shared_(std::make_shared<Shared>()) {}
  ~CallThreads();  // waits for the tasks under way
  CallThreads(const CallThreads&) = delete;
  CallThreads& operator=(const CallThreads&) = delete;

  // Runs call(item) for every item at once (the last on the calling thread) and returns the
  // results in the items' order.
  template <typename Result, typename Item, typename Call>
  std::vector<Result> ForEach(const std::vector<Item>& items, Call call) {
    std::vector<std::future<Result>> running;
    running.reserve(items.size());
    for (size_t i = 0; i + 1 < items.size(); ++i) {
      auto task = std::make_shared<std::packaged_task<Result()>>([&call, &item = items[i]] { return call(item); });
      running.push_back(task->get_future());
      Run([task] { (*task)(); });
    }
    std::vector<Result> results;
    results.reserve(items.size());
    std::optional<Result> last;
    if (!items.empty()) last.emplace(call(items.back()));
    for (auto& f : running) results.push_back(f.get());
    if (last) results.push_back(std::move(*last));
    return results;
  }

 private:
  // Held by the threads too: the last of them may still be letting go of the mutex when the
  // pool itself is gone.
  struct Shared {
    std::mutex mutex;
    std::condition_variable wake;   // a task was queued, or stopping
    std::condition_variable ended;  // a thread ended
    std::deque<std::function<void()>> tasks;  // guarded by mutex
    int idle = 0;                             // guarded by mutex
    int threads = 0;                          // guarded by mutex
    bool stopping = false;                    // guarded by mutex
  };

  void Run(std::function<void()> task);
  static void Work(const std::shared_ptr<Shared>& shared);

  static constexpr std::chrono::seconds kIdleExit{30};
  const std::shared_ptr<Shared> shared_;
};

}  // namespace gridcast
