// The placeholder torrents swarms run on (daemon/pull/plan_torrent.h).
#include "daemon/pull/plan_torrent.h"

#include <gtest/gtest.h>

#include <string>

namespace gridcast {
namespace {

PlanId IdOf(uint8_t fill) {
  std::string bytes(PlanId::kBytes, static_cast<char>(fill));
  return *PlanId::FromBytes(bytes);
}

TEST(PlanTorrentTest, EveryMemberBuildsTheSameTorrentAndEachPlanAnother) {
  const uint64_t size = (5 << 20) + 17;
  auto first = PlanTorrent(IdOf(1), size, 1 << 20);
  auto again = PlanTorrent(IdOf(1), size, 1 << 20);
  auto other = PlanTorrent(IdOf(2), size, 1 << 20);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ((*first)->info_hashes(), (*again)->info_hashes());
  EXPECT_NE((*first)->info_hashes(), (*other)->info_hashes());
  EXPECT_EQ((*first)->num_pieces(), 6);
  EXPECT_EQ((*first)->piece_length(), 1 << 20);
  EXPECT_EQ((*first)->total_size(), static_cast<int64_t>(size));
  EXPECT_FALSE((*first)->info_hashes().has_v2());
  // Each piece's placeholder names the plan and the piece.
  const lt::sha1_hash last = (*first)->hash_for_piece(lt::piece_index_t(5));
  EXPECT_EQ(static_cast<uint8_t>(last[0]), 1);
  EXPECT_EQ(static_cast<uint8_t>(last[19]), 5);
  EXPECT_NE((*first)->hash_for_piece(lt::piece_index_t(4)), last);
}

TEST(PlanTorrentTest, WhatBitTorrentCannotCarryIsRefused) {
  EXPECT_EQ(PlanTorrent(IdOf(1), 0, 1 << 20).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanTorrent(IdOf(1), 1 << 20, 1000).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanTorrent(IdOf(1), (uint64_t{1} << 21) * (16 << 10) + 1, 16 << 10).status().code(),
            StatusCode::kInvalidArgument);  // one piece past kMaxSwarmPieces
}

TEST(PlanTorrentTest, ATorrentThatDoesNotDescribeThePayloadIsRefused) {
  EXPECT_EQ(ParsePayloadTorrent("not bencoded", 100, 16 << 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePayloadTorrent("", 100, 16 << 10).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridcast
