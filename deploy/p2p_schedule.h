// The all-pairs point-to-point baseline's schedule (`gridcast bench --mode p2p-matrix`): every
// ordered pair of nodes is measured once, and pairs run at the same time only when they share
// no bottleneck, so each measures what it would alone.
//
// A pair from -> to uses the sender's NIC upwards, the receiver's NIC downwards, and each
// uplink on the tree path between them in its direction (up from the sender's switch to the
// common ancestor, down from there to the receiver's switch). Its rate alone is the smallest
// capacity on that path. Pairs may share a link while the sum of their rates fits in its
// capacity (so one NIC carries one pair, a 400mbit uplink carries four 100mbit pairs, an
// unshaped link any number); a pair that would overload a link waits for a later round.
// Rounds are built greedily: the slowest pairs first (the ones a bottleneck serialises decide
// the number of rounds), then in "shift" order (i -> i+d), which packs NIC-only networks into
// n - 1 rounds.
// Pure; deterministic; thread-safe.
#pragma once

#include <vector>

#include "collectives/network_model.h"

namespace gridcast {

struct P2pPair {
  int from = 0, to = 0;  // node indices
  double rate_bps = 0;   // the path's smallest capacity (+infinity when unshaped)

  friend bool operator==(const P2pPair&, const P2pPair&) = default;
};

// Every ordered pair exactly once, in rounds; no round overloads a link. An empty model or a
// single node gives no rounds.
std::vector<std::vector<P2pPair>> ScheduleP2pRounds(const NetworkModel& model);

}  // namespace gridcast
