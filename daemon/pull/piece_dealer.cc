#include "daemon/pull/piece_dealer.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gridcast {

PieceDealer::PieceDealer(std::vector<Member> members, int window_pieces)
    : members_(std::move(members)), window_(window_pieces), states_(members_.size()), pace_of_(members_.size(), -1) {
  if (window_ < 1) throw std::invalid_argument("PieceDealer: the window must hold at least one piece");
  for (size_t m = 0; m < members_.size(); ++m) {
    states_[m].reserve.assign(members_[m].stripe.begin(), members_[m].stripe.end());
    states_[m].backstop.assign(members_[m].backstop.begin(), members_[m].backstop.end());
    if (!(members_[m].pieces_per_s >= 0)) throw std::invalid_argument("PieceDealer: a pace is not a rate");
    for (int g : members_[m].group) {
      if (g < 0 || static_cast<size_t>(g) >= members_.size() || static_cast<size_t>(g) == m) {
        throw std::invalid_argument("PieceDealer: a group names an unknown member or the member itself");
      }
    }
  }
  for (size_t m = 0; m < members_.size(); ++m) {
    if (pace_of_[m] >= 0) continue;
    Pace pace;
    pace_of_[m] = static_cast<int>(paces_.size());
    pace.pieces_per_s = members_[m].pieces_per_s;
    pace.burst = window_;
    for (int g : members_[m].group) {
      pace_of_[g] = pace_of_[m];
      pace.pieces_per_s += members_[g].pieces_per_s;
      pace.burst += window_;
    }
    pace.tokens = pace.burst;
    paces_.push_back(pace);
  }
}

std::vector<int> PieceDealer::Joined(int member, const Holds& holds) {
  State& state = states_.at(member);
  state.live = true;
  Refill(member, holds);
  return {state.dealt.begin(), state.dealt.end()};
}

std::vector<int> PieceDealer::Completed(int member, int piece, const Holds& holds) {
  State& state = states_.at(member);
  if (state.dealt.erase(piece) == 0) return {};
  return Refill(member, holds);
}

void PieceDealer::Left(int member, const Holds& holds) {
  State& state = states_.at(member);
  state.live = false;
  std::vector<int> lacking;
  for (int piece : state.dealt) {
    if (!holds(piece)) lacking.push_back(piece);
  }
  state.dealt.clear();
  waiting_.erase(member);
  std::vector<int> takers;
  for (int g : members_[member].group) {
    if (states_[g].live) takers.push_back(g);
  }
  if (takers.empty()) takers.push_back(member);  // kept until it or somebody comes back
  for (size_t i = 0; i < lacking.size(); ++i) states_[takers[i % takers.size()]].reserve.push_front(lacking[i]);
}

std::vector<PieceDealer::Deal> PieceDealer::Advance(double now_s, const HoldsOf& holds_of) {
  const double elapsed_s = now_s_ < 0 ? 0 : std::max(0.0, now_s - now_s_);
  now_s_ = std::max(now_s_, now_s);
  for (Pace& pace : paces_) pace.tokens = std::min(pace.burst, pace.tokens + pace.pieces_per_s * elapsed_s);
  std::vector<Deal> deals;
  const std::set<int> waiting = std::exchange(waiting_, {});
  for (int member : waiting) {
    if (!states_[member].live) continue;
    std::vector<int> pieces = Refill(member, holds_of(member));
    if (!pieces.empty()) deals.push_back({member, std::move(pieces)});
  }
  return deals;
}

std::vector<int> PieceDealer::Refill(int member, const Holds& holds) {
  State& state = states_[member];
  Pace& pace = paces_[pace_of_[member]];
  std::vector<int> announce;
  while (static_cast<int>(state.dealt.size()) < window_) {
    if (pace.pieces_per_s > 0 && pace.tokens < 1) {
      waiting_.insert(member);
      break;
    }
    const int piece = Next(member);
    if (piece < 0) break;
    if (holds(piece)) continue;  // delivered already: nothing to deal
    state.dealt.insert(piece);
    announce.push_back(piece);
    if (pace.pieces_per_s > 0) pace.tokens -= 1;
  }
  return announce;
}

int PieceDealer::Next(int member) {
  std::deque<int>* from = &states_[member].reserve;
  if (from->empty()) {
    for (int g : members_[member].group) {
      if (states_[g].reserve.size() > from->size()) from = &states_[g].reserve;
    }
    for (int g : members_[member].group) {
      if (from->empty() && !states_[g].live) from = &states_[g].backstop;
    }
    if (from->empty()) return -1;
    const int piece = from->back();
    from->pop_back();
    return piece;
  }
  const int piece = from->front();
  from->pop_front();
  return piece;
}

}  // namespace gridcast
