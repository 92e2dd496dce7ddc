// All-to-all multicast (allgather) costs of Kumar & Kalé ([A2A] equations 2-10,
// algorithms.md 4.2-4.5): every one of P nodes sends its m bytes to all others.
//
// Point-to-point model T = α + m·β + C·m + L, with β_em (per byte sent from NIC memory),
// γ (per byte copied when combining) and δ (per byte copied into NIC memory). C is the per-byte
// contention of the strategy's traffic; the caller passes the value that applies (0 for the
// congestion-free schedules of [A2A] 4.1). L is the network latency of the last message; it is
// added only where the paper's equation has it (eqs. 2, 3, 7-10; not eqs. 4-6).
//
// Thread-safety: pure functions on values.
#pragma once

#include "include/gridcast/result.h"

namespace gridcast::models {

struct A2AParams {
  double alpha_s = 0;                // α: software overhead per message
  double beta_s_per_byte = 0;        // β: per byte from main memory
  double beta_em_s_per_byte = 0;     // β_em: per byte from NIC memory
  double gamma_s_per_byte = 0;       // γ: per byte copied when combining
  double delta_s_per_byte = 0;       // δ: per byte copied into NIC memory
  double contention_s_per_byte = 0;  // C
  double latency_s = 0;              // L
};

// Measured on PSC Lemieux (ES45 + QsNet, [A2A] 2): α = 7.4 µs, β = 7.5 ns/B,
// β_em = δ = 3.13 ns/B. γ, C and L were not reported and are 0 here.
A2AParams LemieuxA2AParams();

// Effective bandwidth per node as [A2A] reports it (bytes sent plus received per second):
// 2(P − 1)·m / T.
Result<double> A2AEffectiveBandwidthBps(int p, double m_bytes, double seconds);

// Direct send to everyone, eq. 2: (P − 1)α + (P − 1)m(β + C) + L.
Result<double> A2ADirectSeconds(const A2AParams& params, int p, double m_bytes);

// 2-D mesh, eq. 3: 2√P·α + P·m(β_em + γ + C) + √P·m·δ + L. The printed equation lost the L
// that its text defines (L_mesh); it is kept here like the other strategies'. For P that is not a
// perfect square the mesh is ⌈√P⌉ wide (holes in the last row, algorithms.md 4.3); the paper says
// holes do not change the equation, so √P is read as ⌈√P⌉ in the α and δ terms.
Result<double> A2AMeshSeconds(const A2AParams& params, int p, double m_bytes);

// Hypercube (dimension exchange), eq. 4: log2 P·α + (P − 1)m(β + γ + C). P a power of two.
Result<double> A2AHypercubeSeconds(const A2AParams& params, int p, double m_bytes);

// Hypercube with extra nodes, eq. 5: (⌊log2 P⌋ + λ)α + (1 + λ)(P − 1)m(β + C), λ = 1 when P
// is not a power of two (the extra nodes send in, then are sent everything). Eq. 5 omits γ, and
// its α term counts one extra stage where the description has two; both are kept as printed.
Result<double> A2AHypercubeExtraNodesSeconds(const A2AParams& params, int p, double m_bytes);

// Hybrid ζ, eq. 6: log2 P·α + P'm(β + γ + δ) + (P − P')m·β_em, P' = P/2^ζ (hypercube for
// log2 P − ζ stages, then direct exchange inside ζ-subcubes from NIC memory). The α term leaves
// out the extra messages (+1 for ζ = 2, +4 for ζ = 3) as the paper does. P a power of two and
// 0 <= ζ <= log2 P.
Result<double> A2AHybridSeconds(const A2AParams& params, int p, int zeta, double m_bytes);

// Ring, eq. 7: (P − 1)(α + m·β) + L.
Result<double> A2ARingSeconds(const A2AParams& params, int p, double m_bytes);

// Prefix-send, eq. 8: (P − 1)(α + m·β_em) + m·δ + L. P a power of two (Lemma 5).
Result<double> A2APrefixSendSeconds(const A2AParams& params, int p, double m_bytes);

// kPrefix, eq. 9: (P − 1)(α + m·β_em) + (P/k)·m·δ + L. k a power of two, P a multiple of k.
Result<double> A2AKPrefixSeconds(const A2AParams& params, int p, int k, double m_bytes);

// kShift, eq. 10: same form as kPrefix. P a multiple of k (congestion-free for k in
// {1, 2, 3, 4, 8}; other k are allowed but contend, which C must then carry).
Result<double> A2AKShiftSeconds(const A2AParams& params, int p, int k, double m_bytes);

}  // namespace gridcast::models
