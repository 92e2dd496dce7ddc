#include "daemon/coordinator/joined_broadcasts.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <condition_variable>
#include <optional>

namespace gridcast {

std::string SameBroadcastKey(const v1::BroadcastRequest& request, const std::filesystem::path& canonical,
                             const std::string& name, const std::vector<std::string>& members) {
  struct stat st {};
  if (request.probe_bytes() > 0 || stat(canonical.c_str(), &st) != 0) return "";
  // A file still being written is known by what its sender declared it will hold.
  const std::string contents = request.has_fill()
                                   ? std::to_string(request.fill().size_bytes()) + '\0' + request.fill().sha256()
                                   : std::to_string(st.st_size) + '\0' + std::to_string(st.st_mtim.tv_sec) + '.' +
                                         std::to_string(st.st_mtim.tv_nsec);
  std::string key = canonical.string() + '\0' + name + '\0' + contents + '\0' + request.algorithm() + '\0' +
                    std::to_string(request.mode()) + '\0' + std::to_string(request.chunk_bytes()) + '\0' +
                    std::to_string(request.streams()) + '\0' + (request.in_memory() ? "memory" : "disk") + '\0' +
                    std::to_string(request.digest()) + '\0' + (request.no_reuse() ? "fresh" : "reuse") + '\0' +
                    request.base() + '\0' + request.topology_yaml();
  for (const std::string& m : members) key += '\0' + m;
  return key;
}

// A broadcast running from here, followed by the identical requests that joined it.
struct JoinedBroadcasts::Running {
  std::mutex mutex;
  std::condition_variable changed;
  v1::BroadcastProgress last;     // guarded by mutex
  uint64_t reports = 0;           // guarded by mutex
  std::optional<Status> outcome;  // guarded by mutex

  void Publish(const v1::BroadcastProgress& progress) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      last = progress;
      ++reports;
    }
    changed.notify_all();
  }
  void Finish(const Status& status) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      outcome = status;
    }
    changed.notify_all();
  }
  // Passes on every report from now on, and the outcome.
  Status Follow(const Report& report) {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t seen = reports;
    for (;;) {
      changed.wait(lock, [&] { return reports != seen || outcome.has_value(); });
      if (reports != seen) {
        seen = reports;
        const v1::BroadcastProgress copy = last;
        lock.unlock();
        report(copy);
        lock.lock();
        continue;
      }
      return *outcome;
    }
  }
};

Status JoinedBroadcasts::RunOrJoin(const std::string& key, const std::string& name, const Report& report,
                                   const std::function<Status(const Report&)>& run) {
  if (key.empty()) return run(report);
  std::shared_ptr<Running> running;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (auto other = names_.find(name); other != names_.end() && other->second != key) {
      return Status::FailedPrecondition("a different broadcast of '" + name +
                                        "' runs from this daemon; wait for it, cancel it, or send under another name");
    }
    auto [it, inserted] = running_.try_emplace(key);
    if (!inserted) {
      const std::shared_ptr<Running> first = it->second;
      lock.unlock();
      spdlog::info("a request to send {} again joins the broadcast of it under way", name);
      return first->Follow(report);
    }
    it->second = running = std::make_shared<Running>();
    names_[name] = key;
  }
  const Status status = run([&](const v1::BroadcastProgress& progress) {
    running->Publish(progress);
    report(progress);
  });
  running->Finish(status);
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(key);
  names_.erase(name);
  return status;
}

}  // namespace gridcast
