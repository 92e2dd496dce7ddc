// PieceAssembly: blocks gathered into whole pieces in any order, a budget that sends pieces
// to the store instead, and memory counted until the last holder of a taken piece lets go.
#include "daemon/pull/piece_assembly.h"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>

namespace gridcast {
namespace {

std::vector<uint8_t> Pattern(size_t bytes, uint8_t first) {
  std::vector<uint8_t> v(bytes);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(PieceAssemblyTest, GathersBlocksInAnyOrderIntoTheWholePiece) {
  PieceAssembly assembly(1 << 20);
  const std::vector<uint8_t> piece = Pattern(48 << 10, 7);
  const std::span<const uint8_t> all(piece);
  ASSERT_TRUE(assembly.Add({0, 3}, piece.size(), 32 << 10, all.subspan(32 << 10)));  // the short last block first
  ASSERT_TRUE(assembly.Add({0, 3}, piece.size(), 0, all.subspan(0, 16 << 10)));
  ASSERT_TRUE(assembly.Add({0, 3}, piece.size(), 16 << 10, all.subspan(16 << 10, 16 << 10)));
  EXPECT_EQ(assembly.used_bytes(), piece.size());
  std::shared_ptr<const std::vector<uint8_t>> taken = assembly.Take({0, 3});
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, piece);
  EXPECT_EQ(assembly.Take({0, 3}), nullptr);  // taken once
  EXPECT_EQ(assembly.used_bytes(), piece.size());  // still held by the check
  taken.reset();
  EXPECT_EQ(assembly.used_bytes(), 0u);
}

TEST(PieceAssemblyTest, APieceOverTheBudgetGoesToTheStoreForAllItsBlocks) {
  PieceAssembly assembly(64 << 10);
  const std::vector<uint8_t> block = Pattern(16 << 10, 1);
  EXPECT_TRUE(assembly.Add({0, 0}, 64 << 10, 0, block));
  EXPECT_FALSE(assembly.Add({0, 1}, 64 << 10, 0, block));  // the budget is taken by piece 0
  EXPECT_TRUE(assembly.Add({0, 0}, 64 << 10, 16 << 10, block));  // piece 0 goes on
  std::shared_ptr<const std::vector<uint8_t>> zero = assembly.Take({0, 0});
  zero.reset();
  // Room again, but piece 1 began in the store and stays there: a piece split between memory
  // and the file could never be checked whole.
  EXPECT_FALSE(assembly.Add({0, 1}, 64 << 10, 16 << 10, block));
  EXPECT_EQ(assembly.Take({0, 1}), nullptr);
  // After its check (or a failed one) the piece starts afresh, in memory.
  EXPECT_TRUE(assembly.Add({0, 1}, 64 << 10, 0, block));
}

TEST(PieceAssemblyTest, DropForgetsAPieceAndDropStorageEveryPieceOfOneTorrent) {
  PieceAssembly assembly(1 << 20);
  const std::vector<uint8_t> block = Pattern(16 << 10, 9);
  ASSERT_TRUE(assembly.Add({0, 5}, 32 << 10, 0, block));
  ASSERT_TRUE(assembly.Add({1, 5}, 32 << 10, 0, block));
  ASSERT_TRUE(assembly.Add({1, 6}, 32 << 10, 0, block));
  assembly.Drop({0, 5});
  EXPECT_EQ(assembly.Take({0, 5}), nullptr);
  EXPECT_EQ(assembly.used_bytes(), 64u << 10);
  assembly.DropStorage(1);
  EXPECT_EQ(assembly.used_bytes(), 0u);
  EXPECT_EQ(assembly.Take({1, 6}), nullptr);
}

TEST(PieceAssemblyTest, ATakenPieceOutlivesTheAssemblyAndIsReleasedOnAnyThread) {
  std::shared_ptr<const std::vector<uint8_t>> taken;
  {
    PieceAssembly assembly(1 << 20);
    const std::vector<uint8_t> block = Pattern(16 << 10, 3);
    ASSERT_TRUE(assembly.Add({2, 0}, block.size(), 0, block));
    taken = assembly.Take({2, 0});
  }
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ((*taken)[0], 3);
  std::thread([t = std::move(taken)]() mutable { t.reset(); }).join();
}

}  // namespace
}  // namespace gridcast
