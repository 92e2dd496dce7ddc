// Closed-form broadcast costs of the multi-lane paper ([ML] 1.2 and 1.5, algorithms.md 1.2 and
// 1.5), one function per algorithm, named after the project's planners. The planners forward
// chunk by chunk, so the planner-named function is the pipelined form where the table has one;
// the table's unpipelined rows are the Unpipelined* functions.
//
// Model: p nodes on one site (or p' per site for the two-site forms), M bytes, LAN latency l,
// WAN latency L, node bandwidth b (two NICs of b/2 each, bonded for a single transfer). Costs
// of bonding and of pipelining are ignored, as in the paper. "log p" is ⌈log2 p⌉ (rounds of
// doubling); the paper only uses powers of two. With p = 1 nobody needs the message and every
// single-site cost is 0.
//
// Thread-safety: pure functions on values.
#pragma once

#include "include/gridcast/result.h"

namespace gridcast::models {

struct MlParams {
  double lan_latency_s = 0;       // l
  double wan_latency_s = 0;       // L (two-site forms only)
  double node_bandwidth_Bps = 0;  // b, > 0
};

// flat: PROPOSAL (not in [ML]): the root sends M to all p − 1 others concurrently and its
// upload b is the bottleneck (the project's executor shares it fairly): l + (p − 1)·M/b.
Result<double> FlatBroadcastSeconds(const MlParams& params, int p, double m_bytes);

// chain, pipelined, [ML] 1.2: (p − 1)·l + M/b.
Result<double> ChainBroadcastSeconds(const MlParams& params, int p, double m_bytes);
// Chain, not pipelined, [ML] 1.2: (p − 1)·(l + M/b).
Result<double> UnpipelinedChainBroadcastSeconds(const MlParams& params, int p, double m_bytes);

// binary, pipelined, [ML] 1.2: log p·l + 2M/b (each child link gets b/2).
Result<double> BinaryBroadcastSeconds(const MlParams& params, int p, double m_bytes);
// Binary tree, not pipelined, [ML] 1.2: log p·(l + 2M/b).
Result<double> UnpipelinedBinaryBroadcastSeconds(const MlParams& params, int p, double m_bytes);

// binomial, [ML] 1.2 (not pipelined): log p·(l + M/b).
Result<double> BinomialBroadcastSeconds(const MlParams& params, int p, double m_bytes);

// knomial:k, the k-ary binomial tree. Derivation (the paper gives only k = 2): in each round
// every holder sends M to k − 1 new nodes, so the number of holders is multiplied by k and
// ⌈log_k p⌉ rounds are needed; the k − 1 sends of a round share the holder's upload b, so a
// round costs l + (k − 1)·M/b. Total ⌈log_k p⌉·(l + (k − 1)·M/b); k = 2 gives binomial.
// InvalidArgument if k < 2.
Result<double> KnomialBroadcastSeconds(const MlParams& params, int p, int k, double m_bytes);

// scatter-allgather (van de Geijn) with a recursive-doubling allgather, corrected form of
// [ML] 1.2: 2·log p·l + 2(p − 1)/p·M/b. The scatter is (l + M/2b) + (l + M/4b) + … =
// log p·l + (p − 1)/p·M/b and the allgather costs the same.
Result<double> ScatterAllgatherBroadcastSeconds(const MlParams& params, int p, double m_bytes);
// The same cost exactly as [ML] 1.2 prints it, 2·log p·l + 2p/(p − 1)·M/b: the bandwidth
// factor is inverted (p/(p − 1) instead of (p − 1)/p). Kept only to show the difference.
Result<double> VanDeGeijnAsPrintedSeconds(const MlParams& params, int p, double m_bytes);
// scatter-allgather with a ring allgather (MPICH's choice for large M or p not a power of two):
// binomial scatter log p·l + (p − 1)/p·M/b, then p − 1 ring steps of l + M/(p·b):
// (log p + p − 1)·l + 2(p − 1)/p·M/b.
Result<double> ScatterRingAllgatherBroadcastSeconds(const MlParams& params, int p, double m_bytes);

// multilane, pipelined, [ML] 1.2: log p·l + M/b.
Result<double> MultilaneBroadcastSeconds(const MlParams& params, int p, double m_bytes);

// Two sites of p' nodes each ([ML] 1.5). Each site has at least one node.
// Chain through both sites, derived: 2p' − 2 LAN hops and one WAN hop, (2p' − 2)·l + L + M/b.
Result<double> TwoSiteChainSeconds(const MlParams& params, int p_per_site, double m_bytes);
// The chain as the OCR of [ML] 1.5 prints it, (p' − 1)·l + L + M/b; it undercounts the LAN hops
// (algorithms.md 1.5 REVIEW). Kept for comparison.
Result<double> TwoSiteChainAsPrintedSeconds(const MlParams& params, int p_per_site, double m_bytes);
// Binary, [ML] 1.5: log p'·l + L + 3M/b (the root first sends M to site 2's representative).
Result<double> TwoSiteBinarySeconds(const MlParams& params, int p_per_site, double m_bytes);
// Binomial, [ML] 1.5: L + M/b + log p'·(l + M/b).
Result<double> TwoSiteBinomialSeconds(const MlParams& params, int p_per_site, double m_bytes);
// Multi-lane, PROPOSAL (algorithms.md 1.5, derived): site 2 starts after (1 + depth_A)·l + L
// with depth_A ≈ log p' − 2, and its own trees add log p' − 1 hops:
// max(0, 2·log p' − 2)·l + L + M/b.
Result<double> TwoSiteMultilaneSeconds(const MlParams& params, int p_per_site, double m_bytes);

}  // namespace gridcast::models
