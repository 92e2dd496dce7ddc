#include "daemon/store/rank_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

namespace gridcast {

Status ProcessRegion::Transfer(uint64_t offset, uint8_t* local, uint64_t bytes, bool write) const {
  if (offset > length_ || bytes > length_ - offset) {
    return Status::OutOfRange(std::to_string(bytes) + " bytes at " + std::to_string(offset) + " are outside the " +
                              std::to_string(length_) + " bytes process " + std::to_string(pid_) + " lent");
  }
  while (bytes > 0) {
    iovec here{local, bytes};
    iovec there{reinterpret_cast<void*>(address_ + offset), bytes};
    const ssize_t moved = write ? process_vm_writev(pid_, &here, 1, &there, 1, 0)
                                : process_vm_readv(pid_, &here, 1, &there, 1, 0);
    if (moved <= 0) {
      const int error = moved == 0 ? EFAULT : errno;
      const std::string what = std::string(write ? "writing" : "reading") + " the memory process " +
                               std::to_string(pid_) + " lent: " + std::strerror(error);
      if (error == EPERM) {
        return Status::PermissionDenied(what + " (the daemon needs the process's user, or CAP_SYS_PTRACE)");
      }
      if (error == ESRCH) return Status::FailedPrecondition(what + " (it ended)");
      return Status::FailedPrecondition(what);
    }
    local += moved;
    offset += static_cast<uint64_t>(moved);
    bytes -= static_cast<uint64_t>(moved);
  }
  return Status::Ok();
}

Status ProcessRegion::Probe() {
  uint8_t first = 0;
  uint8_t last = 0;
  std::shared_lock<std::shared_mutex> lock(mutex_);
  GRIDCAST_RETURN_IF_ERROR(Transfer(0, &first, 1, /*write=*/false));
  GRIDCAST_RETURN_IF_ERROR(Transfer(length_ - 1, &last, 1, /*write=*/false));
  return Transfer(0, &first, 1, /*write=*/true);
}

Status ProcessRegion::Write(uint64_t offset, std::span<const uint8_t> bytes) {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (closed_) return Status::FailedPrecondition("process " + std::to_string(pid_) + " took its memory back");
  // process_vm_writev reads the local side only; the cast is for its iovec.
  GRIDCAST_RETURN_IF_ERROR(Transfer(offset, const_cast<uint8_t*>(bytes.data()), bytes.size(), /*write=*/true));
  written_ += bytes.size();
  return Status::Ok();
}

Status ProcessRegion::Read(uint64_t offset, std::span<uint8_t> out) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (closed_) return Status::FailedPrecondition("process " + std::to_string(pid_) + " took its memory back");
  return Transfer(offset, out.data(), out.size(), /*write=*/false);
}

void ProcessRegion::Close() {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  closed_ = true;
}

RankMemory::RankMemory(std::vector<std::shared_ptr<ProcessRegion>> regions, uint64_t kept_bytes)
    : regions_(std::move(regions)), kept_bytes_(kept_bytes) {}

RankMemory::~RankMemory() {
  spdlog::info("memory lent by {} process(es): {} sends from the received buffer, {} read back", regions_.size(),
               sent_from_kept_, sent_read_back_);
}

Status RankMemory::Write(uint64_t chunk, uint64_t offset, std::span<const uint8_t> bytes,
                         std::shared_ptr<const std::vector<uint8_t>> buffer) {
  for (const auto& region : regions_) GRIDCAST_RETURN_IF_ERROR(region->Write(offset, bytes));
  if (buffer != nullptr && buffer->size() >= bytes.size()) Keep(chunk, std::move(buffer));
  return Status::Ok();
}

Result<ChunkRef> RankMemory::At(uint64_t chunk, uint64_t offset, uint64_t length) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto kept = kept_.find(chunk);
    if (kept != kept_.end() && kept->second->size() >= length) {
      ++sent_from_kept_;
      return ChunkRef::InMemory({kept->second->data(), length}, kept->second);
    }
    ++sent_read_back_;
  }
  std::shared_ptr<std::vector<uint8_t>> read = read_back_->Acquire(length);
  GRIDCAST_RETURN_IF_ERROR(regions_.front()->Read(offset, *read));
  Keep(chunk, read);
  return ChunkRef::InMemory({read->data(), length}, read);
}

void RankMemory::Keep(uint64_t chunk, std::shared_ptr<const std::vector<uint8_t>> buffer) {
  if (kept_bytes_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t bytes = buffer->size();
  if (!kept_.emplace(chunk, std::move(buffer)).second) return;
  kept_order_.push_back(chunk);
  kept_total_ += bytes;
  // Past the bound the oldest go; a send of one of those reads it back.
  while (kept_total_ > kept_bytes_ && !kept_order_.empty()) {
    auto oldest = kept_.find(kept_order_.front());
    kept_order_.pop_front();
    if (oldest == kept_.end()) continue;
    kept_total_ -= oldest->second->size();
    kept_.erase(oldest);
  }
}

void RankMemory::Forwarded(uint64_t chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto kept = kept_.find(chunk);
  if (kept == kept_.end()) return;
  kept_total_ -= kept->second->size();
  kept_.erase(kept);
  // kept_order_ still names it: skipped when its turn comes, or dropped here when oldest.
  while (!kept_order_.empty() && !kept_.count(kept_order_.front())) kept_order_.pop_front();
}

uint64_t RankMemory::sent_from_kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sent_from_kept_;
}

uint64_t RankMemory::sent_read_back() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sent_read_back_;
}

}  // namespace gridcast
