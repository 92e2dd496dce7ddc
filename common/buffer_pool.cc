#include "common/buffer_pool.h"

namespace gridcast {

std::shared_ptr<std::vector<uint8_t>> BufferPool::Acquire(size_t bytes) {
  std::unique_ptr<std::vector<uint8_t>> buffer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      buffer = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!buffer) buffer = std::make_unique<std::vector<uint8_t>>();
  buffer->resize(bytes);  // a no-op for a reused buffer of the usual chunk size
  return std::shared_ptr<std::vector<uint8_t>>(buffer.release(), [pool = shared_from_this()](std::vector<uint8_t>* b) {
    pool->Release(std::unique_ptr<std::vector<uint8_t>>(b));
  });
}

void BufferPool::Release(std::unique_ptr<std::vector<uint8_t>> buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < max_idle_) idle_.push_back(std::move(buffer));
}

}  // namespace gridcast
