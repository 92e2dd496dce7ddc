// RecentPieces: blocks lent from the last verified pieces, the oldest making room, and a lent
// block valid until it is returned even after its piece left.
#include "daemon/pull/recent_pieces.h"

#include <gtest/gtest.h>

#include <numeric>

namespace gridcast {
namespace {

RecentPieces::Piece MakePiece(size_t bytes, uint8_t first) {
  auto piece = std::make_shared<std::vector<uint8_t>>(bytes);
  std::iota(piece->begin(), piece->end(), first);
  return piece;
}

TEST(RecentPiecesTest, LendsBlocksInsideRecentPiecesOnly) {
  RecentPieces recent(1 << 20);
  recent.Add({0, 4}, MakePiece(64 << 10, 10));
  const uint8_t* block = recent.Lend({0, 4}, 16 << 10, 16 << 10);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block[0], static_cast<uint8_t>(10 + (16 << 10)));
  EXPECT_EQ(recent.Lend({0, 5}, 0, 16 << 10), nullptr);          // not recent
  EXPECT_EQ(recent.Lend({1, 4}, 0, 16 << 10), nullptr);          // another torrent's piece 4
  EXPECT_EQ(recent.Lend({0, 4}, 56 << 10, 16 << 10), nullptr);   // runs past the piece
  EXPECT_EQ(recent.lent(), 1u);
  EXPECT_TRUE(recent.Return(block));
  EXPECT_FALSE(recent.Return(block));  // returned once
  uint8_t own = 0;
  EXPECT_FALSE(recent.Return(&own));   // never lent here: the caller frees it itself
}

TEST(RecentPiecesTest, TheOldestPiecesMakeRoomAndLentBlocksOutliveThem) {
  RecentPieces recent(128 << 10);
  recent.Add({0, 0}, MakePiece(64 << 10, 1));
  const uint8_t* lent = recent.Lend({0, 0}, 0, 16 << 10);
  ASSERT_NE(lent, nullptr);
  recent.Add({0, 1}, MakePiece(64 << 10, 2));
  recent.Add({0, 2}, MakePiece(64 << 10, 3));  // piece 0 goes
  EXPECT_EQ(recent.recent_bytes(), 128u << 10);
  EXPECT_EQ(recent.Lend({0, 0}, 0, 16 << 10), nullptr);
  EXPECT_NE(recent.Lend({0, 1}, 0, 16 << 10), nullptr);
  EXPECT_EQ(lent[5], 6);  // still the piece's bytes (AddressSanitizer would see a freed one)
  EXPECT_TRUE(recent.Return(lent));
}

TEST(RecentPiecesTest, DropStorageForgetsOneTorrentsPieces) {
  RecentPieces recent(1 << 20);
  recent.Add({0, 0}, MakePiece(16 << 10, 1));
  recent.Add({1, 0}, MakePiece(16 << 10, 1));
  recent.DropStorage(0);
  EXPECT_EQ(recent.Lend({0, 0}, 0, 1), nullptr);
  EXPECT_NE(recent.Lend({1, 0}, 0, 1), nullptr);
  EXPECT_EQ(recent.recent_bytes(), 16u << 10);
}

}  // namespace
}  // namespace gridcast
