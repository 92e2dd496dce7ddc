// Hockney point-to-point model T(m) = α + β·m and its binomial-broadcast prediction ([SUR] 3.2,
// algorithms.md 3.2), plus a per-link matrix of Hockney parameters for heterogeneous networks.
//
// Thread-safety: pure functions on values.
#pragma once

#include <vector>

#include "include/gridcast/result.h"

namespace gridcast::models {

struct HockneyParams {
  double alpha_s = 0;          // α: start-up latency per message
  double beta_s_per_byte = 0;  // β: 1 / bandwidth
};

// T(m) = α + β·m. InvalidArgument on negative or non-finite inputs.
Result<double> HockneyPointToPointSeconds(const HockneyParams& params, double m_bytes);

// Binomial-tree broadcast, [SUR] 3.2: T = ⌈log2 p⌉·(α + β·m). REQUIRES: p >= 1.
Result<double> HockneyBinomialBroadcastSeconds(const HockneyParams& params, int p, double m_bytes);

// Parameters of every ordered pair (i, j) of p processes: links[i * p + j] is the link i -> j
// ("a matrix for heterogeneous networks", algorithms.md 6). The diagonal is unused.
struct HockneyLinkMatrix {
  int processes = 0;
  std::vector<HockneyParams> links;
};

// α_ij + β_ij·m for the link from -> to. InvalidArgument if the matrix is not p×p, an index is
// out of range or from == to.
Result<double> HockneyLinkSeconds(const HockneyLinkMatrix& matrix, int from, int to,
                                  double m_bytes);

}  // namespace gridcast::models
