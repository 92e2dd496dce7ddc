// Shapes of van de Geijn's broadcast: scatter-allgather (ring) and scatter-allgather-rd.
#include <gtest/gtest.h>

#include <bit>

#include "tests/unit/collectives/planners/plan_shape.h"

namespace gridcast {
namespace {

TEST(ScatterAllgather, RingLaneWrittenOut) {
  Plan plan = ShapePlan("scatter-allgather", 8, 16);
  ASSERT_EQ(plan.lanes.size(), 8u);
  // Block 5: scatter 0 -> 1 -> 5, then the ring from 5 skipping 0 and 1.
  EXPECT_EQ(EdgesOf(plan.lanes[5]),
            (Edges{{0, {1}}, {1, {5}}, {5, {6}}, {6, {7}}, {7, {2}}, {2, {3}}, {3, {4}}}));
  // Block 0 never moves in the scatter: the ring is the whole allgather.
  EXPECT_EQ(EdgesOf(plan.lanes[0]),
            (Edges{{0, {1}}, {1, {2}}, {2, {3}}, {3, {4}}, {4, {5}}, {5, {6}}, {6, {7}}}));
}

TEST(ScatterAllgather, RecursiveDoublingLaneWrittenOut) {
  // p = 8, block 5: scatter 0 -> 1 -> 5; exchange from 5: stage 0 5->4; stage 1 5->7, 4->6;
  // stage 2 7->3, 6->2 (1 and 0 already hold the block from the scatter).
  Plan plan = ShapePlan("scatter-allgather-rd", 8, 8);
  EXPECT_EQ(EdgesOf(plan.lanes[5]),
            (Edges{{0, {1}}, {1, {5}}, {5, {4, 7}}, {4, {6}}, {7, {3}}, {6, {2}}}));
  // p = 6 (q = 4, extras 4 and 5), block 5: scatter 0 -> 1 -> 5, so the cube core 1 already
  // holds it; stage 1: 1->3, 0->2; extras: 0->4 (5 has it).
  plan = ShapePlan("scatter-allgather-rd", 6, 6);
  EXPECT_EQ(EdgesOf(plan.lanes[5]), (Edges{{0, {1, 2, 4}}, {1, {5, 3}}}));
  // p = 6, block 2: scatter 0 -> 2; stage 0 2->3; stage 1 3->1 (0 holds); extras 0->4, 1->5.
  EXPECT_EQ(EdgesOf(plan.lanes[2]), (Edges{{0, {2, 4}}, {2, {3}}, {3, {1}}, {1, {5}}}));
}

TEST(ScatterAllgather, OwnerCoverage) {
  for (const char* name : {"scatter-allgather", "scatter-allgather-rd"}) {
    // Every p up to 24, then around 32 (p lanes of p members make this O(p^2) per p).
    for (int p : {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                  16, 17, 18, 19, 20, 21, 22, 23, 24, 31, 32, 33}) {
      const int chunks = 2 * p + p / 3;  // some blocks one chunk longer than others
      Plan plan = ShapePlan(name, p, chunks);
      ASSERT_EQ(plan.lanes.size(), static_cast<size_t>(p)) << name << " p=" << p;
      uint64_t next = 0;
      for (int owner = 0; owner < p; ++owner) {
        const Lane& lane = plan.lanes[owner];
        EXPECT_EQ(lane.source, 0);
        // Block `owner` is the owner-th contiguous piece, sizes 3 (first p/3 owners) then 2.
        ASSERT_EQ(lane.chunks.size(), 1u);
        EXPECT_EQ(lane.chunks[0].begin, next) << name << " p=" << p << " owner " << owner;
        EXPECT_EQ(lane.chunks[0].step, 1u);
        EXPECT_EQ(lane.ChunkCount(), owner < p / 3 ? 3u : 2u);
        next = lane.chunks[0].end;
        // The scatter reaches the owner down the binomial tree: popcount(owner) hops, through
        // the binomial ancestors only (owner with its top bits cleared one by one).
        const std::vector<int> depth = Depths(lane, p);
        EXPECT_EQ(depth[owner], std::popcount(static_cast<unsigned>(owner))) << name << " p=" << p;
        for (int v = owner; v > 0; v = lane.ParentOf(v)) {
          ASSERT_EQ(lane.ParentOf(v), v - (1 << (std::bit_width(static_cast<unsigned>(v)) - 1)))
              << name << " p=" << p << " owner " << owner;
        }
        // The ring variant is one path through everybody.
        if (std::string(name) == "scatter-allgather") {
          for (const auto& [parent, children] : EdgesOf(lane)) EXPECT_EQ(children.size(), 1u);
        }
      }
      EXPECT_EQ(next, static_cast<uint64_t>(chunks));
    }
  }
}

TEST(ScatterAllgather, FewerChunksThanMembers) {
  Plan plan = ShapePlan("scatter-allgather", 10, 3);
  ASSERT_EQ(plan.lanes.size(), 3u);
  for (int owner = 0; owner < 3; ++owner) {
    EXPECT_EQ(plan.lanes[owner].chunks[0].begin, static_cast<uint64_t>(owner));
    EXPECT_EQ(plan.lanes[owner].ChunkCount(), 1u);
  }
  EXPECT_EQ(ShapePlan("scatter-allgather-rd", 10, 0).lanes.size(), 1u);
}

}  // namespace
}  // namespace gridcast
