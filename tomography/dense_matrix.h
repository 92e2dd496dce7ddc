// DenseMatrix: a square matrix of doubles in row-major order, the shape of every similarity
// and rate matrix in tomography (clusters have tens to a few thousand nodes, so n^2 doubles
// are cheap and dense loops beat sparse bookkeeping). A value type; thread-compatible.
#pragma once

#include <cassert>
#include <cstddef>
#include <vector>

namespace gridcast {

class DenseMatrix {
 public:
  DenseMatrix() = default;
  explicit DenseMatrix(int n, double fill = 0) : n_(n), values_(static_cast<size_t>(n) * n, fill) {
    assert(n >= 0);
  }

  int size() const { return n_; }
  double& at(int row, int column) { return values_[Index(row, column)]; }
  double at(int row, int column) const { return values_[Index(row, column)]; }

  // The submatrix on `indices` (in that order).
  DenseMatrix Select(const std::vector<int>& indices) const {
    DenseMatrix out(static_cast<int>(indices.size()));
    for (int i = 0; i < out.n_; ++i) {
      for (int j = 0; j < out.n_; ++j) out.at(i, j) = at(indices[i], indices[j]);
    }
    return out;
  }

 private:
  size_t Index(int row, int column) const {
    assert(row >= 0 && row < n_ && column >= 0 && column < n_);
    return static_cast<size_t>(row) * static_cast<size_t>(n_) + static_cast<size_t>(column);
  }

  int n_ = 0;
  std::vector<double> values_;
};

}  // namespace gridcast
