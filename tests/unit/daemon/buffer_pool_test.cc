// BufferPool: buffers come back when their last user lets go, and idle ones stay bounded.
#include "common/buffer_pool.h"

#include <gtest/gtest.h>

#include <thread>

namespace gridcast {
namespace {

TEST(BufferPoolTest, ReusesAReleasedBufferWithoutReallocating) {
  auto pool = BufferPool::Create(4);
  const uint8_t* first_bytes = nullptr;
  {
    auto a = pool->Acquire(1 << 20);
    ASSERT_EQ(a->size(), 1u << 20);
    first_bytes = a->data();
    (*a)[0] = 42;
  }
  EXPECT_EQ(pool->idle(), 1u);
  auto b = pool->Acquire(1 << 20);
  EXPECT_EQ(b->data(), first_bytes);  // the same allocation, not a fresh one
  EXPECT_EQ(pool->idle(), 0u);
  auto shorter = pool->Acquire(1000);  // e.g. the last chunk
  EXPECT_EQ(shorter->size(), 1000u);
}

TEST(BufferPoolTest, KeepsAtMostMaxIdleBuffers) {
  auto pool = BufferPool::Create(2);
  {
    std::vector<std::shared_ptr<std::vector<uint8_t>>> held;
    for (int i = 0; i < 5; ++i) held.push_back(pool->Acquire(4096));
  }
  EXPECT_EQ(pool->idle(), 2u);
}

TEST(BufferPoolTest, BuffersOutliveThePoolsOwnerAndComeBackFromOtherThreads) {
  std::shared_ptr<std::vector<uint8_t>> buffer;
  std::weak_ptr<BufferPool> watch;
  {
    auto pool = BufferPool::Create(1);
    watch = pool;
    buffer = pool->Acquire(64);
  }
  EXPECT_FALSE(watch.expired());  // the buffer keeps its pool alive
  std::thread([b = std::move(buffer)]() mutable { b.reset(); }).join();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace gridcast
