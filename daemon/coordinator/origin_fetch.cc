#include "daemon/coordinator/origin_fetch.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <system_error>

#include "common/crypto.h"
#include "common/file_io.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "daemon/store/state_files.h"

namespace gridcast {

namespace fs = std::filesystem;

Result<std::unique_ptr<OriginFetch>> OriginFetch::Start(const v1::OriginSource& origin, const fs::path& data_dir,
                                                        Clock::time_point received) {
  OriginRequest request;
  request.url = origin.url();
  request.headers.assign(origin.headers().begin(), origin.headers().end());
  request.ca_pem = origin.ca_pem();
  if (origin.size_limit() > 0) request.size_limit = origin.size_limit();
  const fs::path directory = data_dir / ".gridcast" / "origins";
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) return Status::Internal("cannot create " + directory.string() + ": " + ec.message());
  std::array<uint8_t, 8> unique{};
  RandomBytes(unique);
  const fs::path path = directory / (ToHex(unique) + ".part");
  const int fd = SystemFileIo().OpenAt(AT_FDCWD, path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create " + path.string());
  std::unique_ptr<OriginFetch> fetch(new OriginFetch(std::move(request), path, fd, received));
  fetch->thread_ = std::thread([raw = fetch.get()] { raw->Run(); });
  return fetch;
}

OriginFetch::OriginFetch(OriginRequest request, fs::path path, int fd, Clock::time_point received)
    : request_(std::move(request)),
      shown_url_(RedactedUrl(request_.url)),
      path_(std::move(path)),
      fd_(fd),
      received_(received) {}

OriginFetch::~OriginFetch() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!kept_) {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
}

void OriginFetch::Run() {
  OriginEvents events;
  events.head = [this](const OriginHead& head) {
    std::lock_guard<std::mutex> lock(mutex_);
    head_ = head;
    changed_.notify_all();
  };
  events.arrived = [this](uint64_t bytes) { arrived_ = bytes; };
  events.forwarded = [this] { return forwarding_.load(); };
  Result<OriginFetched> fetched = FetchOrigin(request_, fd_, SystemFileIo(), events, cancel_);
  if (fetched.ok()) {
    spdlog::info("origin {}: {} bytes in {} request(s), {} resumed, {} restarted", shown_url_, fetched->bytes,
                 fetched->attempts, fetched->resumed, fetched->restarted);
  } else if (!cancel_) {
    spdlog::warn("origin {}: {}", shown_url_, fetched.status().ToString());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = Clock::now();
  outcome_ = std::move(fetched);
  changed_.notify_all();
}

Result<uint64_t> OriginFetch::WaitForSize(Clock::time_point deadline, std::chrono::milliseconds stall_after) {
  std::unique_lock<std::mutex> lock(mutex_);
  // An empty payload or one without a length is known only at its end.
  const auto known = [this] { return outcome_.has_value() || (head_ && head_->size.value_or(0) > 0); };
  uint64_t seen = arrived_.load();
  auto progressed = Clock::now();
  while (!known()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      return Status::DeadlineExceeded("origin " + shown_url_ + ": no length known within the broadcast's timeout");
    }
    if (const uint64_t bytes = arrived_.load(); bytes != seen) {
      seen = bytes;
      progressed = now;
    } else if (now - progressed > stall_after) {
      return Status::DeadlineExceeded("origin " + shown_url_ + ": no byte for " +
                                      std::to_string(stall_after.count() / 1000) + " s");
    }
    changed_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(250)));
  }
  if (outcome_) {
    if (!outcome_->ok()) return outcome_->status();
    return (*outcome_)->bytes;
  }
  return *head_->size;
}

Status OriginFetch::Failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return outcome_ && !outcome_->ok() ? outcome_->status() : Status::Ok();
}

Status OriginFetch::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return outcome_.has_value(); });
  return outcome_->status();
}

void OriginFetch::Report(v1::OriginProgress* progress) const {
  progress->set_url(shown_url_);
  progress->set_bytes(arrived_.load());
  std::lock_guard<std::mutex> lock(mutex_);
  if (head_ && head_->size) progress->set_size_bytes(*head_->size);
  progress->set_fetched_s(-1);
  if (outcome_ && outcome_->ok()) {
    const OriginFetched& fetched = **outcome_;
    progress->set_bytes(fetched.bytes);
    progress->set_size_bytes(fetched.bytes);
    progress->set_attempts(static_cast<uint32_t>(fetched.attempts));
    progress->set_resumed(static_cast<uint32_t>(fetched.resumed));
    progress->set_restarted(static_cast<uint32_t>(fetched.restarted));
    progress->set_fetched_s(std::chrono::duration<double>(*ended_ - received_).count());
  }
}

Status OriginFetch::KeepAs(const std::string& data_dir, const std::string& name) {
  GRIDCAST_RETURN_IF_ERROR(Wait());
  // Below the data directory, through no symlink, as every payload written by name.
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(data_dir, name, /*create=*/true));
  if (SystemFileIo().RenameAt(AT_FDCWD, path_.c_str(), parent.first.get(), parent.second.c_str()) != 0) {
    return ErrnoStatus("cannot keep " + shown_url_ + " as " + name);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_ = true;
  }
  // What an earlier copy under the name recorded (its chunk list, a resume bitmap) is not this
  // payload's.
  std::error_code ignored;
  fs::remove(PayloadStatePath(data_dir, name, ".chunks"), ignored);
  fs::remove(PayloadStatePath(data_dir, name, ".state"), ignored);
  return Status::Ok();
}

}  // namespace gridcast
