// The control tree's shape: every member but the source has exactly one parent, the parent
// lists it among its children, and subtrees partition the members.
#include <gtest/gtest.h>

#include <set>

#include "daemon/coordinator/control_tree.h"

namespace gridcast {
namespace {

TEST(ControlTreeShapeTest, FanoutTwoOverEightMembers) {
  EXPECT_EQ(ControlChildren(0, 8, 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(ControlChildren(1, 8, 2), (std::vector<int>{3, 4}));
  EXPECT_EQ(ControlChildren(3, 8, 2), (std::vector<int>{7}));
  EXPECT_TRUE(ControlChildren(4, 8, 2).empty());
  EXPECT_EQ(ControlSubtree(1, 8, 2), (std::vector<int>{1, 3, 4, 7}));
  EXPECT_EQ(ControlParent(0, 2), -1);
  EXPECT_EQ(ControlParent(7, 2), 3);
}

TEST(ControlTreeShapeTest, AFanoutOfAtLeastTheMembersIsTheStar) {
  std::vector<int> all;
  for (int m = 1; m < 9; ++m) all.push_back(m);
  EXPECT_EQ(ControlChildren(0, 9, 8), all);
  for (int m = 1; m < 9; ++m) EXPECT_TRUE(ControlChildren(m, 9, 8).empty());
}

TEST(ControlTreeShapeTest, ParentsAndChildrenAgreeAndSubtreesPartition) {
  for (int members : {1, 2, 3, 10, 64, 257, 10'000}) {
    for (int fanout : {1, 2, 3, 8, 1024}) {
      std::vector<int> parent_seen(static_cast<size_t>(members), 0);
      for (int m = 0; m < members; ++m) {
        for (int c : ControlChildren(m, members, fanout)) {
          ASSERT_EQ(ControlParent(c, fanout), m) << members << " " << fanout;
          ++parent_seen[static_cast<size_t>(c)];
        }
      }
      EXPECT_EQ(parent_seen[0], 0);
      for (int m = 1; m < members; ++m) ASSERT_EQ(parent_seen[static_cast<size_t>(m)], 1) << m;
      // The source's children's subtrees hold every other member exactly once.
      std::multiset<int> covered;
      for (int c : ControlChildren(0, members, fanout)) {
        for (int m : ControlSubtree(c, members, fanout)) covered.insert(m);
      }
      ASSERT_EQ(covered.size(), static_cast<size_t>(members - 1)) << members << " " << fanout;
      for (int m = 1; m < members; ++m) ASSERT_EQ(covered.count(m), 1u);
    }
  }
}

}  // namespace
}  // namespace gridcast
