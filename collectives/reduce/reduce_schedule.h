// Round-by-round schedules for Allreduce and Reduce on any number of processes p, after
// Rabenseifner & Träff ([PVM04] pp. 36-46, algorithms.md 5.3): butterfly steps for the 2^a
// factor of p, then the non-overlapping 3-2/2-1 elimination for the odd factor q, then a
// butterfly on the 2^n survivors of q, and the reduction rounds reversed as the routing phase.
//
// Why this shape: the result must combine the operands in rank order m_0 op m_1 op … op m_{p−1}
// for an associative op that need not commute. Every exchange here pairs adjacent blocks of
// ranks and puts the lower block's operand on the left, so every element of every process gets
// the same bracketing too (requirements 1-3 of the paper).
//
// Layout for p = 2^a·q, q odd (each process knows its step, partner and activity in O(1) from
// these rules; the generator just writes them out):
//  1. a butterfly rounds inside aligned blocks of B = 2^a ranks (partner i ⊕ 2^z).
//  2. Group j (0 <= j < B) is the processes at position j of every block, ranks j + v·B for
//     v = 0…q−1, which then all hold the same element range. If q >= 3, write q = 2^n + Q:
//     v = 0,1,2 form a triple, the rest pairs P_k = (2k+1, 2k+2). Round 1: the triple's first
//     3-2 exchange and a butterfly step inside every pair. Round 2: the triple's second exchange
//     while pair P_2i hands its partial result to P_(2i−1) (2-1 elimination, i = 1…(Q−1)/2).
//     The 2^n survivors hold the two halves of contiguous rank blocks, i.e. the state after a
//     first butterfly round.
//  3. n − 1 butterfly rounds on the survivors (survivor index s, partner s ⊕ 2^z, z >= 1).
// A round halves the block it works on while the block has more than the threshold b elements
// (R steps; the matching routing round is an allgather G); otherwise it exchanges the whole
// block (A steps; nothing to undo). Small vectors take ⌈log p⌉ + 1 rounds when p is not a power
// of two (the extra one delivers the result to the eliminated processes), large ones 2⌈log p⌉.
//
// Reduce gathers instead of allgathering in the routing phase (PROPOSAL, algorithms.md 5.3): the
// upper process of each reversed pair hands what it holds to the lower one, the triple's p1 to
// p0, which collects the result at rank 0; a root other than 0 gets it in one more round (the
// paper is silent on roots; rank 0 is the only process whose operand is leftmost everywhere).
//
// Thread-safety: pure functions on values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast::reduce {

// Elements [begin, end) of the vector.
struct ElementRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const ElementRange&) const = default;
};

// How a receiver combines an incoming block with what it holds over the same range.
enum class Merge {
  kStore,            // routing: the incoming values are final, overwrite
  kReceivedOnLeft,   // held = received op held (the sender's operands have lower ranks)
  kReceivedOnRight,  // held = held op received
};

enum class StepKind {
  kIdle,
  kButterflyHalving,    // R: swap halves with the partner, reduce the half kept
  kButterflyExchange,   // A: swap the whole block, both reduce it
  kTripleFirst,         // 3-2 elimination, first exchange (p1 and p2 swap halves)
  kTripleSecond,        // 3-2 elimination, second exchange (p2 -> p0, p0 -> p1)
  kPairAbsorb,          // 2-1 elimination: an eliminated pair hands its partial result over
  kButterflyAllgather,  // G: reverse of R, swap the final halves
  kTripleAllgatherA,    // reverse of kTripleSecond (halving): p0 -> p2, p1 -> p0
  kTripleAllgatherB,    // reverse of kTripleFirst (halving): p2 -> p1, p1 -> p2
  kPairRelease,         // reverse of kPairAbsorb: the eliminated pair gets the final blocks
  kDeliverResult,       // small vectors: a survivor sends the result to an eliminated process
  kGather,              // Reduce: hand everything held toward rank 0
  kToRoot,              // Reduce: rank 0 sends the result to a root other than 0
};
std::string_view StepKindName(StepKind kind);

struct Outgoing {
  int to = -1;
  ElementRange range;
};
struct Incoming {
  int from = -1;
  ElementRange range;
  Merge merge = Merge::kStore;
};

// One process in one round. One port: at most one send and one receive, which may overlap.
// Sends read the values held at the start of the round.
struct ProcessStep {
  StepKind kind = StepKind::kIdle;
  std::optional<Outgoing> send;
  std::optional<Incoming> receive;
  // False from the round in which the process hands its partial result away (3-2 or 2-1
  // elimination, its last Reduce gather) until final data is sent to it; meanwhile it sends
  // nothing.
  bool active_after = true;
};

struct ReduceRound {
  std::vector<ProcessStep> steps;  // indexed by rank
};

enum class ReduceKind { kAllreduce, kReduce };

struct ReduceOptions {
  ReduceKind kind = ReduceKind::kAllreduce;
  // Reduce only: the rank that ends with the result.
  int root = 0;
  // b: a round halves its block while the block has more than this many elements. Large
  // values give the latency-optimal variant, 1 the bandwidth-optimal one. >= 1.
  int64_t halving_threshold_elements = 1;
};

struct ReduceSchedule {
  ReduceKind kind = ReduceKind::kAllreduce;
  int processes = 0;
  int64_t elements = 0;
  int root = 0;
  std::vector<ReduceRound> rounds;
};

// The schedule for p processes reducing vectors of `elements` elements.
// InvalidArgument if p < 1, elements < 1, the threshold < 1 or the root is not a rank.
Result<ReduceSchedule> MakeReduceSchedule(int p, int64_t elements, const ReduceOptions& options);

}  // namespace gridcast::reduce
