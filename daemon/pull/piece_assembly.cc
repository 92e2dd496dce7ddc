#include "daemon/pull/piece_assembly.h"

#include <cstring>

namespace gridcast {

namespace {
// Idle piece buffers kept for the next pieces: reused memory is cheap, fresh memory is not
// (docs/performance-history.md, "CPU per byte").
constexpr size_t kIdleBuffers = 16;
}  // namespace

PieceAssembly::PieceAssembly(uint64_t budget_bytes)
    : budget_bytes_(budget_bytes),
      pool_(BufferPool::Create(kIdleBuffers)),
      used_(std::make_shared<std::atomic<uint64_t>>(0)) {}

bool PieceAssembly::Add(const Key& key, uint64_t piece_bytes, uint64_t offset, std::span<const uint8_t> block) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = gathering_.find(key);
  if (it == gathering_.end()) {
    if (elsewhere_.count(key) != 0) return false;
    if (used_->load() + piece_bytes > budget_bytes_) {
      elsewhere_.insert(key);
      return false;
    }
    used_->fetch_add(piece_bytes);
    std::shared_ptr<std::vector<uint8_t>> buffer = pool_->Acquire(piece_bytes);
    // Counted until the last holder (a check on another thread) lets the buffer go.
    std::shared_ptr<std::vector<uint8_t>> counted(buffer.get(), [buffer, used = used_](std::vector<uint8_t>*) {
      used->fetch_sub(buffer->size());
    });
    it = gathering_.emplace(key, std::move(counted)).first;
  }
  std::memcpy(it->second->data() + offset, block.data(), block.size());
  return true;
}

std::shared_ptr<const std::vector<uint8_t>> PieceAssembly::Take(const Key& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  elsewhere_.erase(key);
  auto it = gathering_.find(key);
  if (it == gathering_.end()) return nullptr;
  std::shared_ptr<const std::vector<uint8_t>> piece = std::move(it->second);
  gathering_.erase(it);
  return piece;
}

void PieceAssembly::Drop(const Key& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  elsewhere_.erase(key);
  gathering_.erase(key);
}

void PieceAssembly::DropStorage(int storage) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(gathering_, [storage](const auto& entry) { return entry.first.first == storage; });
  std::erase_if(elsewhere_, [storage](const Key& key) { return key.first == storage; });
}

}  // namespace gridcast
