#include "collectives/reduce/reduce_schedule.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <string>

namespace gridcast::reduce {
namespace {

// What one reduction round did, kept so the routing phase can undo it in reverse order.
struct PairRecord {  // a butterfly step between two processes holding the same range
  int lower;
  int upper;
  ElementRange before;
  bool halved;
};
struct TripleRecord {  // one 3-2 elimination step; before = the range all three held
  int p0, p1, p2;
  ElementRange before;
  bool halved;
};
struct AbsorbRecord {  // a 2-1 elimination: pair (from_lower, from_upper) into (into_*)
  int into_lower, into_upper, from_lower, from_upper;
  ElementRange lower_range, upper_range;  // the ranges each side of the pairs held
};
struct RoundRecord {
  std::vector<PairRecord> pairs;
  std::vector<TripleRecord> triple_first;
  std::vector<TripleRecord> triple_second;
  std::vector<AbsorbRecord> absorbs;
};

ElementRange LowerHalf(ElementRange r) { return {r.begin, r.begin + r.size() / 2}; }
ElementRange UpperHalf(ElementRange r) { return {r.begin + r.size() / 2, r.end}; }

class Builder {
 public:
  Builder(int p, int64_t elements, const ReduceOptions& options)
      : options_(options), held_(p, ElementRange{0, elements}), active_(p, true) {
    schedule_.kind = options.kind;
    schedule_.processes = p;
    schedule_.elements = elements;
    schedule_.root = options.kind == ReduceKind::kReduce ? options.root : 0;
  }

  ReduceSchedule Build() {
    const int p = schedule_.processes;
    const int block = 1 << std::countr_zero(static_cast<unsigned>(p));
    const int q = p / block;
    for (int bit = 1; bit < block; bit *= 2) {
      RoundRecord& record = NextRound();
      for (int i = 0; i < p; ++i) {
        if ((i & bit) == 0) Butterfly(record, i, i | bit);
      }
      CloseRound();
    }
    if (q >= 3) Eliminate(block, q);
    const int reduction_rounds = static_cast<int>(records_.size());
    for (int r = reduction_rounds - 1; r >= 0; --r) {
      NewRound();
      if (options_.kind == ReduceKind::kAllreduce) {
        Allgather(records_[r]);
      } else {
        Gather(records_[r]);
      }
    }
    if (options_.kind == ReduceKind::kReduce && schedule_.root != 0) {
      NewRound();
      Move(StepKind::kToRoot, 0, schedule_.root, {0, schedule_.elements}, Merge::kStore);
      active_[0] = false;
      active_[schedule_.root] = true;
      CloseRound();
    }
    std::erase_if(schedule_.rounds, [](const ReduceRound& round) {
      return std::all_of(round.steps.begin(), round.steps.end(),
                         [](const ProcessStep& s) { return s.kind == StepKind::kIdle; });
    });
    return std::move(schedule_);
  }

 private:
  // Steps 2 and 3 of the layout (see the header) for every group j at once, so the groups run
  // in lockstep.
  void Eliminate(int block, int q) {
    const int n = std::bit_width(static_cast<unsigned>(q)) - 1;  // q = 2^n + Q
    const int absorbs = (q - (1 << n) - 1) / 2;                  // (Q − 1) / 2
    const int pairs = (q - 3) / 2;
    auto rank = [block](int j, int v) { return j + v * block; };
    // P_k = (2k+1, 2k+2), k = 1…pairs; P_2i is absorbed into P_(2i−1) for i = 1…absorbs.
    auto absorbed = [absorbs](int k) { return k % 2 == 0 && k <= 2 * absorbs; };

    RoundRecord& first = NextRound();
    for (int j = 0; j < block; ++j) {
      TripleFirst(first, rank(j, 0), rank(j, 1), rank(j, 2));
      for (int k = 1; k <= pairs; ++k) Butterfly(first, rank(j, 2 * k + 1), rank(j, 2 * k + 2));
    }
    CloseRound();
    RoundRecord& second = NextRound();
    for (int j = 0; j < block; ++j) {
      TripleSecond(second, rank(j, 0), rank(j, 1), rank(j, 2));
      for (int i = 1; i <= absorbs; ++i) {
        Absorb(second, rank(j, 4 * i - 1), rank(j, 4 * i), rank(j, 4 * i + 1), rank(j, 4 * i + 2));
      }
    }
    CloseRound();
    // Survivors in rank order; survivor 2t and 2t+1 hold the halves of the t-th rank block.
    std::vector<std::vector<int>> survivors(block);
    for (int j = 0; j < block; ++j) {
      survivors[j] = {rank(j, 0), rank(j, 1)};
      for (int k = 1; k <= pairs; ++k) {
        if (absorbed(k)) continue;
        survivors[j].push_back(rank(j, 2 * k + 1));
        survivors[j].push_back(rank(j, 2 * k + 2));
      }
      assert(static_cast<int>(survivors[j].size()) == (1 << n));
    }
    for (int bit = 2; bit < (1 << n); bit *= 2) {
      RoundRecord& record = NextRound();
      for (const std::vector<int>& s : survivors) {
        for (int t = 0; t < static_cast<int>(s.size()); ++t) {
          if ((t & bit) == 0) Butterfly(record, s[t], s[t | bit]);
        }
      }
      CloseRound();
    }
  }

  bool Halves(ElementRange range) const {
    return range.size() > options_.halving_threshold_elements;
  }

  void Butterfly(RoundRecord& record, int lower, int upper) {
    const ElementRange before = held_[lower];
    assert(held_[upper] == before);
    const bool halved = Halves(before);
    const StepKind kind = halved ? StepKind::kButterflyHalving : StepKind::kButterflyExchange;
    const ElementRange lower_keeps = halved ? LowerHalf(before) : before;
    const ElementRange upper_keeps = halved ? UpperHalf(before) : before;
    Move(kind, lower, upper, upper_keeps, Merge::kReceivedOnLeft);
    Move(kind, upper, lower, lower_keeps, Merge::kReceivedOnRight);
    held_[lower] = lower_keeps;
    held_[upper] = upper_keeps;
    record.pairs.push_back({lower, upper, before, halved});
  }

  // p1 and p2 reduce m1 op m2: halving, p1 keeps the upper half and p2 the lower one.
  void TripleFirst(RoundRecord& record, int p0, int p1, int p2) {
    const ElementRange before = held_[p0];
    const bool halved = Halves(before);
    const ElementRange p1_keeps = halved ? UpperHalf(before) : before;
    const ElementRange p2_keeps = halved ? LowerHalf(before) : before;
    Move(StepKind::kTripleFirst, p2, p1, p1_keeps, Merge::kReceivedOnRight);
    Move(StepKind::kTripleFirst, p1, p2, p2_keeps, Merge::kReceivedOnLeft);
    held_[p1] = p1_keeps;
    held_[p2] = p2_keeps;
    record.triple_first.push_back({p0, p1, p2, before, halved});
  }

  // p2 hands (m1 op m2) to p0 while p0 hands m0 to p1; both then hold m0 op (m1 op m2), halved
  // or whole, and p2 drops out.
  void TripleSecond(RoundRecord& record, int p0, int p1, int p2) {
    const ElementRange before = held_[p0];
    const bool halved = Halves(before);
    const ElementRange p0_keeps = halved ? LowerHalf(before) : before;
    const ElementRange p1_keeps = halved ? UpperHalf(before) : before;
    Move(StepKind::kTripleSecond, p2, p0, p0_keeps, Merge::kReceivedOnRight);
    Move(StepKind::kTripleSecond, p0, p1, p1_keeps, Merge::kReceivedOnLeft);
    held_[p0] = p0_keeps;
    held_[p1] = p1_keeps;
    active_[p2] = false;
    record.triple_second.push_back({p0, p1, p2, before, halved});
  }

  void Absorb(RoundRecord& record, int into_lower, int into_upper, int from_lower, int from_upper) {
    assert(held_[into_lower] == held_[from_lower] && held_[into_upper] == held_[from_upper]);
    Move(StepKind::kPairAbsorb, from_lower, into_lower, held_[into_lower], Merge::kReceivedOnRight);
    Move(StepKind::kPairAbsorb, from_upper, into_upper, held_[into_upper], Merge::kReceivedOnRight);
    active_[from_lower] = false;
    active_[from_upper] = false;
    record.absorbs.push_back(
        {into_lower, into_upper, from_lower, from_upper, held_[into_lower], held_[into_upper]});
  }

  // Allreduce routing: undo one reduction round. Halved steps are undone by sending the final
  // halves back; whole-block steps need nothing, except that eliminated processes must be sent
  // the result.
  void Allgather(const RoundRecord& record) {
    for (const PairRecord& r : record.pairs) {
      if (!r.halved) continue;
      Deliver(StepKind::kButterflyAllgather, r.lower, r.upper, LowerHalf(r.before));
      Deliver(StepKind::kButterflyAllgather, r.upper, r.lower, UpperHalf(r.before));
    }
    for (const TripleRecord& t : record.triple_second) {
      if (t.halved) {
        Deliver(StepKind::kTripleAllgatherA, t.p0, t.p2, LowerHalf(t.before));
        Deliver(StepKind::kTripleAllgatherA, t.p1, t.p0, UpperHalf(t.before));
      } else {
        Deliver(StepKind::kDeliverResult, t.p1, t.p2, t.before);
      }
    }
    for (const TripleRecord& t : record.triple_first) {
      if (!t.halved) continue;
      Deliver(StepKind::kTripleAllgatherB, t.p2, t.p1, LowerHalf(t.before));
      Deliver(StepKind::kTripleAllgatherB, t.p1, t.p2, UpperHalf(t.before));
    }
    for (const AbsorbRecord& a : record.absorbs) {
      // Whole blocks (no halving in the pairs' first round) are the result itself.
      const StepKind kind =
          a.lower_range != a.upper_range ? StepKind::kPairRelease : StepKind::kDeliverResult;
      Deliver(kind, a.into_lower, a.from_lower, a.lower_range);
      Deliver(kind, a.into_upper, a.from_upper, a.upper_range);
    }
    CloseRound();
  }

  // Reduce routing: the upper side of each undone step hands what it holds to the lower side,
  // if it still holds part of the result, and leaves.
  void Gather(const RoundRecord& record) {
    for (const PairRecord& r : record.pairs) {
      if (!active_[r.upper]) continue;
      if (r.halved) Move(StepKind::kGather, r.upper, r.lower, UpperHalf(r.before), Merge::kStore);
      active_[r.upper] = false;
    }
    for (const TripleRecord& t : record.triple_second) {
      if (!active_[t.p1]) continue;
      if (t.halved) Move(StepKind::kGather, t.p1, t.p0, UpperHalf(t.before), Merge::kStore);
      active_[t.p1] = false;
    }
    CloseRound();
  }

  // A routing transfer of final values: the receiver becomes active again.
  void Deliver(StepKind kind, int from, int to, ElementRange range) {
    Move(kind, from, to, range, Merge::kStore);
    active_[to] = true;
  }

  void Move(StepKind kind, int from, int to, ElementRange range, Merge merge) {
    ProcessStep& sender = schedule_.rounds.back().steps[from];
    ProcessStep& receiver = schedule_.rounds.back().steps[to];
    assert(!sender.send && !receiver.receive && "one port: one send and one receive per round");
    assert(sender.kind == StepKind::kIdle || sender.kind == kind);
    assert(receiver.kind == StepKind::kIdle || receiver.kind == kind);
    sender.kind = kind;
    receiver.kind = kind;
    sender.send = Outgoing{to, range};
    receiver.receive = Incoming{from, range, merge};
  }

  // Opens a reduction round; the caller fills it and closes it.
  RoundRecord& NextRound() {
    NewRound();
    return records_.emplace_back();
  }

  void NewRound() { schedule_.rounds.push_back({std::vector<ProcessStep>(schedule_.processes)}); }

  // Records each process's activity after the current round.
  void CloseRound() {
    std::vector<ProcessStep>& steps = schedule_.rounds.back().steps;
    for (size_t i = 0; i < steps.size(); ++i) steps[i].active_after = active_[i];
  }

  const ReduceOptions options_;
  std::vector<ElementRange> held_;  // the range whose partial result each process holds
  std::vector<bool> active_;
  std::vector<RoundRecord> records_;
  ReduceSchedule schedule_;
};

}  // namespace

std::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kIdle:
      return "idle";
    case StepKind::kButterflyHalving:
      return "butterfly-halving";
    case StepKind::kButterflyExchange:
      return "butterfly-exchange";
    case StepKind::kTripleFirst:
      return "triple-first";
    case StepKind::kTripleSecond:
      return "triple-second";
    case StepKind::kPairAbsorb:
      return "pair-absorb";
    case StepKind::kButterflyAllgather:
      return "butterfly-allgather";
    case StepKind::kTripleAllgatherA:
      return "triple-allgather-a";
    case StepKind::kTripleAllgatherB:
      return "triple-allgather-b";
    case StepKind::kPairRelease:
      return "pair-release";
    case StepKind::kDeliverResult:
      return "deliver-result";
    case StepKind::kGather:
      return "gather";
    case StepKind::kToRoot:
      return "to-root";
  }
  return "?";
}

Result<ReduceSchedule> MakeReduceSchedule(int p, int64_t elements, const ReduceOptions& options) {
  if (p < 1) return Status::InvalidArgument("p must be >= 1 (got " + std::to_string(p) + ")");
  if (elements < 1) {
    return Status::InvalidArgument("elements must be >= 1 (got " + std::to_string(elements) + ")");
  }
  if (options.halving_threshold_elements < 1) {
    return Status::InvalidArgument("halving_threshold_elements must be >= 1");
  }
  if (options.kind == ReduceKind::kReduce && (options.root < 0 || options.root >= p)) {
    return Status::InvalidArgument("root " + std::to_string(options.root) + " is not a rank of " +
                                   std::to_string(p));
  }
  return Builder(p, elements, options).Build();
}

}  // namespace gridcast::reduce
