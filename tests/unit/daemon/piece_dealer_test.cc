// PieceDealer: every piece dealt once per group, windows respected, fast members take over
// slow members' reserves, departed members' pieces come back.
#include "daemon/pull/piece_dealer.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace gridcast {
namespace {

// n members in one group, piece p in the stripe of member p % n.
std::vector<PieceDealer::Member> OneGroup(int n, int pieces) {
  std::vector<PieceDealer::Member> members(n);
  for (int p = 0; p < pieces; ++p) members[p % n].stripe.push_back(p);
  for (int m = 0; m < n; ++m) {
    for (int g = 0; g < n; ++g) {
      if (g != m) members[m].group.push_back(g);
    }
  }
  return members;
}

const PieceDealer::Holds kHoldsNothing = [](int) { return false; };

TEST(PieceDealerTest, DealsAWindowOfTheStripeThenOneMorePerCompletedPiece) {
  PieceDealer dealer(OneGroup(2, 10), 2);
  EXPECT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0, 2}));
  EXPECT_EQ(dealer.outstanding(0), 2);
  EXPECT_TRUE(dealer.Completed(0, 1, kHoldsNothing).empty());  // not dealt to it: no room made
  EXPECT_EQ(dealer.Completed(0, 0, kHoldsNothing), (std::vector<int>{4}));
  EXPECT_EQ(dealer.outstanding(0), 2);
}

TEST(PieceDealerTest, AFastMemberTakesOverTheBackOfTheLargestReserve) {
  PieceDealer dealer(OneGroup(3, 9), 1);  // stripes {0,3,6} {1,4,7} {2,5,8}
  ASSERT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0}));
  ASSERT_EQ(dealer.Joined(1, kHoldsNothing), (std::vector<int>{1}));
  EXPECT_EQ(dealer.Completed(0, 0, kHoldsNothing), (std::vector<int>{3}));
  EXPECT_EQ(dealer.Completed(0, 3, kHoldsNothing), (std::vector<int>{6}));
  // Own reserve empty: member 2 never connected and holds the largest reserve.
  EXPECT_EQ(dealer.Completed(0, 6, kHoldsNothing), (std::vector<int>{8}));
  // {4, 7} and {2, 5}: a tie goes to the first of its group.
  EXPECT_EQ(dealer.Completed(0, 8, kHoldsNothing), (std::vector<int>{7}));
  EXPECT_EQ(dealer.reserve(2), 2u);  // {2, 5}: now the largest
  EXPECT_EQ(dealer.Completed(0, 7, kHoldsNothing), (std::vector<int>{5}));
}

TEST(PieceDealerTest, EveryPieceIsDealtExactlyOnceWhateverTheOrder) {
  constexpr int kMembers = 5;
  constexpr int kPieces = 97;
  PieceDealer dealer(OneGroup(kMembers, kPieces), 3);
  std::map<int, int> dealt_to;
  std::vector<std::set<int>> outstanding(kMembers);
  auto record = [&](int member, const std::vector<int>& pieces) {
    for (int p : pieces) {
      ASSERT_TRUE(dealt_to.emplace(p, member).second) << "piece " << p << " dealt twice";
      outstanding[member].insert(p);
    }
  };
  for (int m = 0; m < kMembers; ++m) record(m, dealer.Joined(m, kHoldsNothing));
  // Member 0 is fast (completes 4 per round), member 4 slow (one every third round).
  for (int round = 0; round < 400; ++round) {
    for (int m = 0; m < kMembers; ++m) {
      const int completions = m == 0 ? 4 : (m == 4 ? (round % 3 == 0) : 1);
      for (int c = 0; c < completions && !outstanding[m].empty(); ++c) {
        const int piece = *outstanding[m].begin();
        outstanding[m].erase(outstanding[m].begin());
        record(m, dealer.Completed(m, piece, kHoldsNothing));
      }
      EXPECT_LE(dealer.outstanding(m), 3);
    }
  }
  EXPECT_EQ(dealt_to.size(), static_cast<size_t>(kPieces));
  int by_fast = 0;
  int by_slow = 0;
  for (const auto& [piece, member] : dealt_to) {
    by_fast += member == 0;
    by_slow += member == 4;
  }
  EXPECT_GT(by_fast, by_slow * 3) << "the fast member should have taken over the slow one's stripe";
}

TEST(PieceDealerTest, PiecesOfAMemberThatLeftGoBackToItsGroupFirst) {
  PieceDealer dealer(OneGroup(2, 8), 2);  // stripes {0,2,4,6} {1,3,5,7}
  ASSERT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0, 2}));
  ASSERT_EQ(dealer.Joined(1, kHoldsNothing), (std::vector<int>{1, 3}));
  dealer.Left(1, [](int piece) { return piece == 1; });  // it got 1, not 3
  EXPECT_EQ(dealer.outstanding(1), 0);
  EXPECT_EQ(dealer.Completed(0, 0, kHoldsNothing), (std::vector<int>{3}));
  // It comes back: its reserve is still its own, and it is dealt from it again.
  EXPECT_EQ(dealer.Joined(1, kHoldsNothing), (std::vector<int>{5, 7}));
}

TEST(PieceDealerTest, TheBackstopOfAMemberThatIsNotLiveIsDealtOnceTheReservesAreEmpty) {
  std::vector<PieceDealer::Member> members = OneGroup(3, 6);  // stripes {0,3} {1,4} {2,5}
  members[1].backstop = {6, 7};
  members[2].backstop = {8};
  PieceDealer dealer(std::move(members), 1);
  ASSERT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0}));
  ASSERT_EQ(dealer.Joined(1, kHoldsNothing), (std::vector<int>{1}));
  EXPECT_EQ(dealer.Completed(0, 0, kHoldsNothing), (std::vector<int>{3}));
  EXPECT_EQ(dealer.Completed(0, 3, kHoldsNothing), (std::vector<int>{5}));  // member 2 never came
  EXPECT_EQ(dealer.Completed(0, 5, kHoldsNothing), (std::vector<int>{4}));
  EXPECT_EQ(dealer.Completed(0, 4, kHoldsNothing), (std::vector<int>{2}));
  // Every reserve is empty: member 2's backstop, not live member 1's.
  EXPECT_EQ(dealer.Completed(0, 2, kHoldsNothing), (std::vector<int>{8}));
  EXPECT_TRUE(dealer.Completed(0, 8, kHoldsNothing).empty());
  // Member 1 leaves: its imports are the source's to deal now, but what it holds is not dealt.
  dealer.Left(1, kHoldsNothing);
  EXPECT_EQ(dealer.Joined(0, [](int piece) { return piece == 7; }), (std::vector<int>{1}));
  EXPECT_EQ(dealer.Completed(0, 1, [](int piece) { return piece == 7; }), (std::vector<int>{6}));
}

TEST(PieceDealerTest, PiecesAMemberHoldsAreNeverDealtToIt) {
  PieceDealer dealer(OneGroup(1, 6), 2);
  EXPECT_EQ(dealer.Joined(0, [](int piece) { return piece < 3; }), (std::vector<int>{3, 4}));
}

TEST(PieceDealerTest, GroupsDoNotShare) {
  // Two groups of one: a member never takes another group's pieces.
  std::vector<PieceDealer::Member> members(2);
  members[0].stripe = {0, 1};
  members[1].stripe = {0, 1};
  PieceDealer dealer(members, 1);
  EXPECT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0}));
  EXPECT_EQ(dealer.Completed(0, 0, kHoldsNothing), (std::vector<int>{1}));
  EXPECT_TRUE(dealer.Completed(0, 1, kHoldsNothing).empty());
  EXPECT_EQ(dealer.reserve(1), 2u);
}

TEST(PieceDealerTest, APacedGroupIsDealtItsWindowsAtOnceThenItsPaceASecond) {
  // Group {0, 1} paced at 2 + 2 pieces a second, group {2} unpaced.
  std::vector<PieceDealer::Member> members = OneGroup(2, 40);
  for (PieceDealer::Member& m : members) m.pieces_per_s = 2;
  members.push_back({{100, 101, 102, 103, 104, 105}, {}, 0, {}});
  PieceDealer dealer(members, 2);
  const PieceDealer::HoldsOf holds_nothing = [](int) { return kHoldsNothing; };
  EXPECT_TRUE(dealer.Advance(10.0, holds_nothing).empty());  // sets the clock
  EXPECT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0, 2}));
  EXPECT_EQ(dealer.Joined(1, kHoldsNothing), (std::vector<int>{1, 3}));  // the bucket: 4 windows' pieces
  EXPECT_EQ(dealer.Joined(2, kHoldsNothing), (std::vector<int>{100, 101}));
  EXPECT_TRUE(dealer.Completed(0, 0, kHoldsNothing).empty());  // the pace's 4 are spent
  EXPECT_TRUE(dealer.Completed(0, 2, kHoldsNothing).empty());
  EXPECT_EQ(dealer.Completed(2, 100, kHoldsNothing), (std::vector<int>{102}));  // unpaced: at once
  EXPECT_TRUE(dealer.Advance(10.2, holds_nothing).empty());  // 0.8 of a piece earned
  EXPECT_EQ(dealer.Advance(10.5, holds_nothing), (std::vector<PieceDealer::Deal>{{0, {4, 6}}}));
  EXPECT_EQ(dealer.Advance(11.0, holds_nothing), (std::vector<PieceDealer::Deal>{}));  // its window is full
  EXPECT_EQ(dealer.Completed(1, 1, kHoldsNothing), (std::vector<int>{5}));  // 2 earned since 10.5, room for 1
  // Over a long run the group is dealt its pace, however often the clock is read.
  int dealt = 0;
  std::vector<std::set<int>> out(2);
  out[0] = {4, 6};
  out[1] = {3, 5};
  for (int step = 1; step <= 100; ++step) {
    for (int m = 0; m < 2; ++m) {
      for (int piece : std::set<int>(out[m])) {
        out[m].erase(piece);
        for (int more : dealer.Completed(m, piece, kHoldsNothing)) {
          out[m].insert(more);
          ++dealt;
        }
      }
    }
    for (const PieceDealer::Deal& deal : dealer.Advance(11.0 + step * 0.05, holds_nothing)) {
      for (int more : deal.pieces) {
        out[deal.member].insert(more);
        ++dealt;
      }
    }
  }
  EXPECT_NEAR(dealt, 1 + 4 * 5.0, 1.5);  // the piece left from before, then 5 s at 4 a second
}

TEST(PieceDealerTest, AMemberThatLeftIsNotDealtWhenThePaceComesBack) {
  std::vector<PieceDealer::Member> members = OneGroup(1, 10);
  members[0].pieces_per_s = 1;
  PieceDealer dealer(members, 2);
  const PieceDealer::HoldsOf holds_nothing = [](int) { return kHoldsNothing; };
  dealer.Advance(0, holds_nothing);
  ASSERT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0, 1}));
  EXPECT_TRUE(dealer.Completed(0, 0, kHoldsNothing).empty());
  dealer.Left(0, kHoldsNothing);
  EXPECT_TRUE(dealer.Advance(5, [](int) -> PieceDealer::Holds { throw std::logic_error("asked of a member gone"); })
                  .empty());
  EXPECT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{1, 2}));  // the bucket kept its 2
}

const PieceDealer::HoldsOf kHoldsNothingAnywhere = [](int) { return kHoldsNothing; };

// Two members of one group, window 2, the clock at 0: {0, 2} dealt to member 0, {1, 3} to 1.
void JoinTwo(PieceDealer& dealer) {
  dealer.Advance(0, kHoldsNothingAnywhere);
  ASSERT_EQ(dealer.Joined(0, kHoldsNothing), (std::vector<int>{0, 2}));
  ASSERT_EQ(dealer.Joined(1, kHoldsNothing), (std::vector<int>{1, 3}));
}

// JoinTwo with 4 pieces: once member 1 reports its stripe the pool is empty, and member 0's
// {0, 2} are still out.
class PieceDealerEndGameTest : public ::testing::Test {
 protected:
  void SetUp() override { JoinTwo(dealer_); }
  // Member 1 reports its stripe `at_s` in: the group's turnaround.
  void MemberOneReportsAt(double at_s) {
    ASSERT_TRUE(dealer_.Advance(at_s, kHoldsNothingAnywhere).empty());
    ASSERT_TRUE(dealer_.Completed(1, 1, kHoldsNothing).empty());
    ASSERT_TRUE(dealer_.Completed(1, 3, kHoldsNothing).empty());
  }
  PieceDealer dealer_{OneGroup(2, 4), 2};
};

TEST_F(PieceDealerEndGameTest, PiecesLateAtOneMemberAreDealtToAnotherOnce) {
  MemberOneReportsAt(1);
  EXPECT_TRUE(dealer_.Advance(PieceDealer::kLateTurnarounds - 0.01, kHoldsNothingAnywhere).empty());  // not late yet
  EXPECT_EQ(dealer_.Advance(PieceDealer::kLateTurnarounds + 0.01, kHoldsNothingAnywhere),
            (std::vector<PieceDealer::Deal>{{1, {0, 2}}}));
  EXPECT_EQ(dealer_.redealt(), 2);
  EXPECT_TRUE(dealer_.Advance(100, kHoldsNothingAnywhere).empty());  // never a third time
  // Whoever reports first, the other still reports its own deal.
  EXPECT_TRUE(dealer_.Completed(1, 0, kHoldsNothing).empty());
  EXPECT_EQ(dealer_.outstanding(0), 2);
  EXPECT_TRUE(dealer_.Completed(0, 0, kHoldsNothing).empty());
  EXPECT_EQ(dealer_.outstanding(0), 1);
}

TEST_F(PieceDealerEndGameTest, ALatePieceGoesOnlyToAMemberThatLacksItAndHasRoom) {
  MemberOneReportsAt(1);
  const PieceDealer::HoldsOf holds_zero = [](int) -> PieceDealer::Holds { return [](int piece) { return piece == 0; }; };
  EXPECT_EQ(dealer_.Advance(10, holds_zero), (std::vector<PieceDealer::Deal>{{1, {2}}}));
  dealer_.Left(1, kHoldsNothing);  // its 2 goes back to member 0: the pool is not empty
  EXPECT_TRUE(dealer_.Advance(20, kHoldsNothingAnywhere).empty());
}

TEST_F(PieceDealerEndGameTest, AShortTurnaroundMakesAPieceLateOnlyAfterTheFloor) {
  MemberOneReportsAt(0.001);  // a turnaround of a millisecond, as on loopback
  EXPECT_TRUE(dealer_.Advance(PieceDealer::kLateAtLeastS - 0.01, kHoldsNothingAnywhere).empty());
  EXPECT_EQ(dealer_.Advance(PieceDealer::kLateAtLeastS + 0.01, kHoldsNothingAnywhere),
            (std::vector<PieceDealer::Deal>{{1, {0, 2}}}));
}

TEST(PieceDealerTest, NoEndGameWhileTheGroupStillHasPieces) {
  PieceDealer dealer(OneGroup(2, 10), 2);
  JoinTwo(dealer);
  dealer.Advance(1, kHoldsNothingAnywhere);
  ASSERT_EQ(dealer.Completed(1, 1, kHoldsNothing), (std::vector<int>{5}));
  EXPECT_TRUE(dealer.Advance(100, kHoldsNothingAnywhere).empty());  // 0 and 2 very late, but 4 6 8 wait
  EXPECT_EQ(dealer.redealt(), 0);
}

TEST(PieceDealerTest, RejectsBadConstruction) {
  EXPECT_THROW(PieceDealer(OneGroup(2, 4), 0), std::invalid_argument);
  std::vector<PieceDealer::Member> self_group(1);
  self_group[0].group = {0};
  EXPECT_THROW(PieceDealer(self_group, 1), std::invalid_argument);
  std::vector<PieceDealer::Member> bad_pace = OneGroup(1, 4);
  bad_pace[0].pieces_per_s = -1;
  EXPECT_THROW(PieceDealer(bad_pace, 1), std::invalid_argument);
}

}  // namespace
}  // namespace gridcast
