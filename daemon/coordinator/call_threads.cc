#include "daemon/coordinator/call_threads.h"

#include <thread>

namespace gridcast {

CallThreads::~CallThreads() {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->stopping = true;
  shared_->wake.notify_all();
  shared_->ended.wait(lock, [this] { return shared_->threads == 0; });
}

void CallThreads::Run(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->tasks.push_back(std::move(task));
  if (shared_->idle >= static_cast<int>(shared_->tasks.size())) {
    shared_->wake.notify_one();
    return;
  }
  ++shared_->threads;
  std::thread([shared = shared_] { Work(shared); }).detach();
}

void CallThreads::Work(const std::shared_ptr<Shared>& shared) {
  std::unique_lock<std::mutex> lock(shared->mutex);
  for (;;) {
    ++shared->idle;
    const bool woken =
        shared->wake.wait_for(lock, kIdleExit, [&] { return !shared->tasks.empty() || shared->stopping; });
    --shared->idle;
    if (shared->tasks.empty()) {
      if (shared->stopping || !woken) break;
      continue;
    }
    std::function<void()> task = std::move(shared->tasks.front());
    shared->tasks.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
  --shared->threads;
  shared->ended.notify_all();
}

}  // namespace gridcast
