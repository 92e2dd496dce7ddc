#include "daemon/pull/piece_dealer.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gridcast {

PieceDealer::PieceDealer(std::vector<Member> members, int window_pieces)
    : members_(std::move(members)), window_(window_pieces), states_(members_.size()), group_of_(members_.size(), -1) {
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
    if (group_of_[m] >= 0) continue;
    Group group;
    group.members.push_back(static_cast<int>(m));
    group.members.insert(group.members.end(), members_[m].group.begin(), members_[m].group.end());
    for (int g : group.members) {
      group_of_[g] = static_cast<int>(groups_.size());
      group.pieces_per_s += members_[g].pieces_per_s;
      group.burst += window_;
    }
    group.tokens = group.burst;
    groups_.push_back(std::move(group));
  }
}

std::vector<int> PieceDealer::Joined(int member, const Holds& holds) {
  State& state = states_.at(member);
  state.live = true;
  Refill(member, holds);
  std::vector<int> dealt;
  for (const auto& [piece, at_s] : state.dealt) dealt.push_back(piece);
  return dealt;
}

std::vector<int> PieceDealer::Completed(int member, int piece, const Holds& holds) {
  State& state = states_.at(member);
  auto dealt = state.dealt.find(piece);
  if (dealt == state.dealt.end()) return {};
  if (dealt->second >= 0 && now_s_ >= dealt->second) {
    constexpr double kWeight = 0.1;
    double& turnaround_s = groups_[group_of_[member]].turnaround_s;
    const double took_s = now_s_ - dealt->second;
    turnaround_s = turnaround_s < 0 ? took_s : (1 - kWeight) * turnaround_s + kWeight * took_s;
  }
  state.dealt.erase(dealt);
  return Refill(member, holds);
}

void PieceDealer::Left(int member, const Holds& holds) {
  State& state = states_.at(member);
  state.live = false;
  std::vector<int> lacking;
  for (const auto& [piece, at_s] : state.dealt) {
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
  if (!lacking.empty() || !state.backstop.empty()) groups_[group_of_[member]].drained = false;
}

std::vector<PieceDealer::Deal> PieceDealer::Advance(double now_s, const HoldsOf& holds_of) {
  const double elapsed_s = now_s_ < 0 ? 0 : std::max(0.0, now_s - now_s_);
  now_s_ = std::max(now_s_, now_s);
  for (Group& group : groups_) group.tokens = std::min(group.burst, group.tokens + group.pieces_per_s * elapsed_s);
  std::vector<Deal> deals;
  const std::set<int> waiting = std::exchange(waiting_, {});
  for (int member : waiting) {
    if (!states_[member].live) continue;
    std::vector<int> pieces = Refill(member, holds_of(member));
    if (!pieces.empty()) deals.push_back({member, std::move(pieces)});
  }
  for (Group& group : groups_) {
    if (group.drained && group.turnaround_s >= 0) EndGame(group, holds_of, deals);
  }
  return deals;
}

void PieceDealer::EndGame(Group& group, const HoldsOf& holds_of, std::vector<Deal>& deals) {
  const double late_s = now_s_ - std::max(kLateTurnarounds * group.turnaround_s, kLateAtLeastS);
  for (int late_at : group.members) {
    for (const auto& [piece, at_s] : states_[late_at].dealt) {
      if (at_s < 0 || at_s > late_s || group.redealt.contains(piece) || !group.MayDeal()) continue;
      int taker = -1;
      for (int m : group.members) {
        const State& state = states_[m];
        if (m == late_at || !state.live || static_cast<int>(state.dealt.size()) >= window_) continue;
        if (taker >= 0 && state.dealt.size() >= states_[taker].dealt.size()) continue;
        if (!holds_of(m)(piece)) taker = m;
      }
      if (taker < 0) continue;
      states_[taker].dealt.emplace(piece, now_s_);
      group.redealt.insert(piece);
      ++redealt_;
      if (group.Paced()) group.tokens -= 1;
      auto deal = std::find_if(deals.begin(), deals.end(), [taker](const Deal& d) { return d.member == taker; });
      if (deal == deals.end()) deal = deals.insert(deals.end(), Deal{taker, {}});
      deal->pieces.push_back(piece);
    }
  }
}

std::vector<int> PieceDealer::Refill(int member, const Holds& holds) {
  State& state = states_[member];
  Group& group = groups_[group_of_[member]];
  std::vector<int> announce;
  while (static_cast<int>(state.dealt.size()) < window_) {
    if (!group.MayDeal()) {
      waiting_.insert(member);
      break;
    }
    const int piece = Next(member);
    if (piece < 0) {
      group.drained = true;
      break;
    }
    if (holds(piece)) continue;  // delivered already: nothing to deal
    state.dealt.emplace(piece, now_s_);
    announce.push_back(piece);
    if (group.Paced()) group.tokens -= 1;
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
