#include "daemon/pull/piece_dealer.h"

#include <algorithm>
#include <stdexcept>

namespace gridcast {

PieceDealer::PieceDealer(std::vector<Member> members, int window_pieces)
    : members_(std::move(members)), window_(window_pieces), states_(members_.size()) {
  if (window_ < 1) throw std::invalid_argument("PieceDealer: the window must hold at least one piece");
  for (size_t m = 0; m < members_.size(); ++m) {
    states_[m].reserve.assign(members_[m].stripe.begin(), members_[m].stripe.end());
    for (int g : members_[m].group) {
      if (g < 0 || static_cast<size_t>(g) >= members_.size() || static_cast<size_t>(g) == m) {
        throw std::invalid_argument("PieceDealer: a group names an unknown member or the member itself");
      }
    }
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
  std::vector<int> takers;
  for (int g : members_[member].group) {
    if (states_[g].live) takers.push_back(g);
  }
  if (takers.empty()) takers.push_back(member);  // kept until it or somebody comes back
  for (size_t i = 0; i < lacking.size(); ++i) states_[takers[i % takers.size()]].reserve.push_front(lacking[i]);
}

std::vector<int> PieceDealer::Refill(int member, const Holds& holds) {
  State& state = states_[member];
  std::vector<int> announce;
  while (static_cast<int>(state.dealt.size()) < window_) {
    const int piece = Next(member);
    if (piece < 0) break;
    if (holds(piece)) continue;  // delivered already: nothing to deal
    state.dealt.insert(piece);
    announce.push_back(piece);
  }
  return announce;
}

int PieceDealer::Next(int member) {
  std::deque<int>* from = &states_[member].reserve;
  if (from->empty()) {
    for (int g : members_[member].group) {
      if (states_[g].reserve.size() > from->size()) from = &states_[g].reserve;
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
