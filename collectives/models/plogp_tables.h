// pLogP predictions of broadcast and scatter strategies (Barchet-Estefanel & Mounié, [PVM04]
// Tables 1 and 2, algorithms.md 5.2), the segment-size optimiser, and the decision map
// D: (operation, m, p) -> (algorithm, segment) that picks the fastest predicted method.
//
// Notation: P nodes, message m, segment s, k = ⌈m/s⌉ segments, L latency, g(x) the gap of an
// x-byte message, g(1) the gap of a minimal control message (rendezvous handshake).
// OCR-RECON: the table's floor/ceiling brackets and the scatter Σ signs were damaged; they
// follow Kielmann et al.'s pLogP formulas (algorithms.md 5.2).
//
// Thread-safety: pure functions on values.
#pragma once

#include <string_view>
#include <vector>

#include "collectives/models/plogp.h"
#include "include/gridcast/result.h"

namespace gridcast::models {

// Do not reorder: tests and decision maps list them in this, the paper's, order.
enum class PLogPBroadcast {
  kFlat,                // (P − 1)·g(m) + L
  kFlatRendezvous,      // (P − 1)·g(m) + 2·g(1) + 3L
  kSegmentedFlat,       // (P − 1)·g(s)·k + L
  kChain,               // (P − 1)·(g(m) + L)
  kChainRendezvous,     // (P − 1)·(g(m) + 2·g(1) + 3L)
  kSegmentedChain,      // (P − 1)·(g(s) + L) + g(s)·(k − 1)
  kBinary,              // ⌈log P⌉·(2·g(m) + L)  (the paper's upper bound)
  kBinomial,            // ⌊log P⌋·g(m) + ⌈log P⌉·L
  kBinomialRendezvous,  // ⌊log P⌋·g(m) + ⌈log P⌉·(2·g(1) + 3L)
  kSegmentedBinomial,   // ⌊log P⌋·g(s)·k + ⌈log P⌉·L
};
inline constexpr int kNumPLogPBroadcasts = 10;

enum class PLogPScatter {
  kFlat,      // (P − 1)·g(m) + L
  kChain,     // Σ_{j=1}^{P−1} g(j·m) + (P − 1)·L
  kBinomial,  // Σ_{j=0}^{⌈log P⌉−1} g(2^j·m) + ⌈log P⌉·L
};
inline constexpr int kNumPLogPScatters = 3;

std::string_view PLogPBroadcastName(PLogPBroadcast algorithm);
std::string_view PLogPScatterName(PLogPScatter algorithm);
bool IsSegmented(PLogPBroadcast algorithm);

// [PVM04] Table 1 for P nodes and an m-byte message. segment_bytes (> 0) is used only by the
// segmented variants, with k = max(1, ⌈m/s⌉). InvalidArgument on p < 1 or bad sizes.
Result<double> PLogPBroadcastSeconds(const PLogPParams& params, PLogPBroadcast algorithm, int p,
                                     double m_bytes, double segment_bytes);

// [PVM04] Table 2: the root holds m·P bytes and every node, the root included, gets m.
Result<double> PLogPScatterSeconds(const PLogPParams& params, PLogPScatter algorithm, int p,
                                   double m_bytes);

// An algorithm with its segment size; segment_bytes == m_bytes means "not segmented".
struct BroadcastMethod {
  PLogPBroadcast algorithm = PLogPBroadcast::kBinomial;
  double segment_bytes = 0;
  double predicted_s = 0;
};

// The segment sizes the optimiser tries for an m-byte message (PROPOSAL, algorithms.md 5.2):
// powers of two from 1 KiB while below m, then m itself (one segment).
std::vector<double> CandidateSegmentBytes(double m_bytes);

// The segment size with the smallest prediction for `algorithm` (smallest s on ties); a
// non-segmented algorithm gets s = m. InvalidArgument unless m_bytes > 0.
Result<BroadcastMethod> OptimiseSegment(const PLogPParams& params, PLogPBroadcast algorithm, int p,
                                        double m_bytes);

// D(broadcast, m, p): every Table 1 variant at its best segment size, the fastest kept
// (earliest in table order on ties).
Result<BroadcastMethod> ChooseBroadcastMethod(const PLogPParams& params, int p, double m_bytes);

struct ScatterMethod {
  PLogPScatter algorithm = PLogPScatter::kFlat;
  double predicted_s = 0;
};
// D(scatter, m, p): the fastest Table 2 variant (earliest on ties).
Result<ScatterMethod> ChooseScatterMethod(const PLogPParams& params, int p, double m_bytes);

struct BroadcastDecision {
  int p = 0;
  double m_bytes = 0;
  BroadcastMethod method;
};
// The decision map over a grid: one entry per (p, m) pair, p-major, in the given orders.
Result<std::vector<BroadcastDecision>> BroadcastDecisionMap(const PLogPParams& params,
                                                            const std::vector<int>& ps,
                                                            const std::vector<double>& sizes_bytes);

}  // namespace gridcast::models
