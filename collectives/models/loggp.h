// LogP and LogGP broadcast predictions ([SUR] 3.2, algorithms.md 3.2).
//
// LogP: L = network latency bound, o = CPU overhead per message (paid by sender and receiver),
// g = minimum gap between consecutive messages of one processor. LogGP adds G, the gap per byte.
//
// Thread-safety: pure functions on values.
#pragma once

#include "include/gridcast/result.h"

namespace gridcast::models {

struct LogPParams {
  double latency_s = 0;   // L
  double overhead_s = 0;  // o
  double gap_s = 0;       // g
};

struct LogGPParams {
  LogPParams logp;
  double gap_per_byte_s = 0;  // G
};

// One root sending a small message to two peers ([SUR] Fig. 1.5): the second send starts after
// max(g, o), then o + L + o reach the peer, so T = g + 2o + L if g > o, else 3o + L.
Result<double> LogPTwoPeerBroadcastSeconds(const LogPParams& params);

// Binomial broadcast of a small message, [SUR] 3.2: T = ⌈log2 p⌉·(2o + L). The formula assumes
// g < 2o + L (a holder's next send is ready before its previous child could forward);
// InvalidArgument otherwise, so callers do not silently use it outside its range.
Result<double> LogPBinomialBroadcastSeconds(const LogPParams& params, int p);

// Binomial broadcast of m bytes, [SUR] 3.2: T = ⌈log2 p⌉·(2o + L + G·(m − 1)). REQUIRES m >= 1.
Result<double> LogGPBinomialBroadcastSeconds(const LogGPParams& params, int p, double m_bytes);

}  // namespace gridcast::models
