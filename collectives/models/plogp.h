// pLogP parameters (Kielmann et al., [SUR] 3.2 and [PVM04] 5.2): latency L and the gap g(m)
// and send/receive overheads o_s(m), o_r(m) as piecewise-linear functions of the message size,
// which is how the measured curves (eager/rendezvous switch included) are stored.
//
// Thread-safety: immutable after Create(); pure functions.
#pragma once

#include <utility>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast::models {

struct SizeSample {
  double size_bytes = 0;
  double seconds = 0;
};

// A piecewise-linear function of the message size through measured samples.
class PiecewiseLinear {
 public:
  // InvalidArgument unless there is at least one sample, sizes are finite, >= 0 and strictly
  // increasing, and every value is finite and >= 0.
  static Result<PiecewiseLinear> Create(std::vector<SizeSample> samples);

  // Interpolates between neighbouring samples. Outside the sampled range the end segment is
  // extended (a one-sample function is constant), clamped at 0, because large messages are
  // usually measured less densely and keep the last slope. REQUIRES: size_bytes >= 0.
  double operator()(double size_bytes) const;

  const std::vector<SizeSample>& samples() const { return samples_; }

 private:
  explicit PiecewiseLinear(std::vector<SizeSample> samples) : samples_(std::move(samples)) {}
  std::vector<SizeSample> samples_;
};

struct PLogPParams {
  double latency_s = 0;           // L
  PiecewiseLinear gap;            // g(m)
  PiecewiseLinear send_overhead;  // o_s(m)
  PiecewiseLinear recv_overhead;  // o_r(m)
};

// A model with constant overheads whose gap is linear: g(m) = g0 + m / bandwidth. Handy for
// tests and for a network only characterised by latency and bandwidth.
// InvalidArgument on negative values or a bandwidth <= 0.
Result<PLogPParams> LinearPLogP(double latency_s, double gap0_s, double bandwidth_Bps,
                                double overhead_s);

}  // namespace gridcast::models
