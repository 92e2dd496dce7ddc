// OriginFetch: the source's fetch of a broadcast's HTTP(S) origin (BroadcastRequest.origin)
// into a file below its data directory, on a thread of its own (FetchOrigin), while the
// broadcast sends the file on as it fills (a streamed filling source: docs/origin.md). Once
// the origin announced the size the broadcast can start; an origin that sends no length is
// fetched whole first. The file is removed when the fetch is dropped, unless kept as the
// source's own copy after the broadcast succeeded. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/store/http_origin.h"
#include "include/gridcast/result.h"
#include "proto/control.pb.h"

namespace gridcast {

class OriginFetch {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts fetching `origin` into a fresh file below `data_dir`/.gridcast/origins; `received`
  // is when the request reached the source (what OriginProgress.fetched_s counts from).
  static Result<std::unique_ptr<OriginFetch>> Start(const v1::OriginSource& origin, const std::filesystem::path& data_dir,
                                                    Clock::time_point received);
  // Cancels a fetch still running, waits for it, and removes the file unless it was kept.
  ~OriginFetch();
  OriginFetch(const OriginFetch&) = delete;
  OriginFetch& operator=(const OriginFetch&) = delete;

  // The payload's size, once the origin announced it (an empty one, or one without a length,
  // once it is all in). The fetch's error if it ends first; DeadlineExceeded once `deadline`
  // passed, or no byte arrived for `stall_after` while fetching one without a length.
  Result<uint64_t> WaitForSize(Clock::time_point deadline, std::chrono::milliseconds stall_after);
  const std::filesystem::path& path() const { return path_; }
  std::string shown_url() const { return shown_url_; }
  // Bytes of the file are being sent on from now: a 200 to a Range request can no longer be
  // taken from zero again.
  void Forwarding() { forwarding_ = true; }
  // The fetch's error once it failed; Ok while it runs and once it succeeded.
  Status Failure() const;
  // Waits for the fetch to end: its error, or Ok with the whole payload in the file.
  Status Wait();
  void Report(v1::OriginProgress* progress) const;
  // After the broadcast succeeded: the fetched file becomes payload `name` of `data_dir`
  // (replacing what was there, and its recorded chunk list), the source's own copy.
  Status KeepAs(const std::string& data_dir, const std::string& name);

 private:
  OriginFetch(OriginRequest request, std::filesystem::path path, int fd, Clock::time_point received);
  void Run();

  const OriginRequest request_;
  const std::string shown_url_;
  const std::filesystem::path path_;
  const int fd_;
  const Clock::time_point received_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> forwarding_{false};
  std::atomic<uint64_t> arrived_{0};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<OriginHead> head_;          // guarded by mutex_
  std::optional<Result<OriginFetched>> outcome_;  // guarded by mutex_: set once the fetch ended
  std::optional<Clock::time_point> ended_;  // guarded by mutex_
  bool kept_ = false;                       // guarded by mutex_
  std::thread thread_;
};

}  // namespace gridcast
