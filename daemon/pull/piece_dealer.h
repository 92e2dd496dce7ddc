// PieceDealer: which pieces the source of a pull swarm offers to which member, and when.
//
// Every piece should leave the source once per bandwidth group; members pass it on among
// themselves. With fixed stripes (member i takes its 1/n of the pieces from the source) the
// members finish their stripes at very different times: a member's connection to the source
// gets only its share of that member's downlink, which it also fills from its peers, so on
// flat16 x 100mbit (256 MiB) stripes finished between 12.8 s and 27.1 s and the source's upload
// fell from 93 to 15-30 mbit for the last 6 s of the broadcast.
//
// So pieces are dealt, not fixed. A member's planned stripe is its reserve; the source offers
// (announces) only a window of pieces at a time and deals more as the member reports pieces it
// completed. A member whose reserve is empty takes pieces from the back of the largest reserve
// in its group, so every member keeps pulling from the source until the group's pool is empty
// and all finish with the source at about the same time. Pieces dealt to a member that leaves
// without them go back to the front of its group's reserves; a member that never comes has its
// reserve taken by the others. Each piece is still dealt once per group (a re-deal only after
// its member left).
//
// A member may import part of its group's copy from another group instead of the source
// (SwarmMember::takes_only): those pieces are its backstop, never in a reserve. If the member
// is not live (it left, or never came) once its group's reserves are empty, the others are
// dealt its backstop from the source, as they take over a reserve: nobody else imports them.
//
// A group may be paced: the plan gives the source's upload to groups whose own bottleneck sets
// the bound first (collectives/planners/swarm.cc, ShareTheSourceUpload), so the others are
// dealt at most their share a second (a token bucket per group, full at the start and holding
// at most the group's windows). A member whose window waits for its group's pace is dealt
// more when Advance() brings the clock past it.
//
// The end game: once a group's pool is empty, a piece outstanding at one member for longer
// than kLateTurnarounds times the group's usual turnaround (deal to report, averaged), and at
// least kLateAtLeastS, is dealt once more, to the member of its group with the most room in its
// window. (Where turnarounds are milliseconds, on loopback, twice one is mere jitter: without
// the floor a 1 MiB-window swarm sent 5% of its pieces twice.) Pieces then leave the source
// twice for that group, but only at the tail and only when late: one member whose connection to
// the source stalls for more than a turnaround (TCP waiting out retransmission timeouts) no
// longer holds its whole group waiting for its last pieces.
//
// Pure and single-threaded (the caller serialises: libtorrent's network thread).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace gridcast {

class PieceDealer {
 public:
  struct Member {
    std::vector<int> stripe;  // the planned stripe, dealt first, in this order
    std::vector<int> group;   // members (indices) who may take its reserve over, not itself
    // Its part of its group's pace, pieces a second; the group's pace is the sum over its
    // members, and 0 (every member's 0) leaves the group unpaced.
    double pieces_per_s = 0;
    std::vector<int> backstop;  // pieces it imports from another group (see above)
  };
  // Whether a member already holds a piece (a resumed member does; it is never dealt those).
  using Holds = std::function<bool(int piece)>;
  using HoldsOf = std::function<Holds(int member)>;
  struct Deal {
    int member;
    std::vector<int> pieces;
    bool operator==(const Deal&) const = default;
  };

  // `window_pieces` >= 1: how many dealt pieces a member may have outstanding.
  PieceDealer(std::vector<Member> members, int window_pieces);

  // The member connected (again, or on one more connection): the pieces to announce on that
  // connection now: all it was dealt and has not reported, new ones included.
  std::vector<int> Joined(int member, const Holds& holds);
  // The member reported (HAVE) a piece: the pieces to announce to it now (none unless that
  // freed room in its window). Call Advance first: the report's time is the clock's.
  std::vector<int> Completed(int member, int piece, const Holds& holds);
  // The member's last connection ended: what it was dealt and lacks goes back to its group.
  void Left(int member, const Holds& holds);
  // The clock (seconds, any origin, never going back) reached now_s: paced groups earn their
  // pace since the last call, members that waited for it are dealt now, and so are late pieces
  // of groups in the end game. The first call only sets the clock (pieces dealt before it are
  // never late).
  std::vector<Deal> Advance(double now_s, const HoldsOf& holds_of);

  int outstanding(int member) const { return static_cast<int>(states_.at(member).dealt.size()); }
  size_t reserve(int member) const { return states_.at(member).reserve.size(); }
  // Pieces dealt a second time in the end game, over all groups.
  int redealt() const { return redealt_; }

  static constexpr double kLateTurnarounds = 2.0;
  static constexpr double kLateAtLeastS = 0.5;

 private:
  struct State {
    std::deque<int> reserve;
    std::deque<int> backstop;
    std::map<int, double> dealt;  // announced to it, not yet reported back -> when (the clock)
    bool live = false;
  };
  // A bandwidth group: its pace, and where its end game stands.
  struct Group {
    std::vector<int> members;
    double pieces_per_s = 0;  // 0: unpaced
    double burst = 0;         // the most the bucket holds: the group's windows
    double tokens = 0;        // pieces it may be dealt now
    bool drained = false;     // the pool is empty: reserves, and backstops of absent members
    double turnaround_s = -1; // from deal to report, a moving average; -1: none reported yet
    std::set<int> redealt;    // late pieces dealt a second time (never a third)
    bool Paced() const { return pieces_per_s > 0; }
    bool MayDeal() const { return !Paced() || tokens >= 1; }
  };
  std::vector<int> Refill(int member, const Holds& holds);
  // The next piece for `member`: its own reserve first, else the back of the largest reserve
  // in its group, else the backstop of a member of its group that is not live. -1 when the
  // group has nothing left.
  int Next(int member);
  // Deals the late pieces of a drained group once more, each to the live member with the most
  // room that lacks it.
  void EndGame(Group& group, const HoldsOf& holds_of, std::vector<Deal>& deals);

  const std::vector<Member> members_;
  const int window_;
  std::vector<State> states_;
  std::vector<int> group_of_;  // member -> its entry of groups_
  std::vector<Group> groups_;
  std::set<int> waiting_;      // members whose window waits for their group's pace
  double now_s_ = -1;          // -1: no Advance yet
  int redealt_ = 0;
};

}  // namespace gridcast
