#pragma once
// Reference SpMV and SpMM on any format: each walks the stored non-zeros in the format's own order
// (rows for the row-major formats, columns for CSC) and accumulates every output element over
// increasing column of A, so all formats give the same bits, and so does Eigen's sparse product.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/sparse/codec.h"

namespace wafersim::sparse {

// y = A x. Throws InputError when x's length is not A's column count.
std::vector<double> spmv(const Encoded& a, const std::vector<double>& x);

// A dense matrix, row-major.
struct DenseMatrix {
  uint64_t rows = 0;
  uint64_t cols = 0;
  std::vector<double> values;  // rows x cols
  double at(uint64_t r, uint64_t c) const { return values[r * cols + c]; }
};

// C = A B with B dense or in any format; C dense. Throws InputError when the inner sizes differ.
DenseMatrix spmm(const Encoded& a, const DenseMatrix& b);
DenseMatrix spmm(const Encoded& a, const Encoded& b);

}  // namespace wafersim::sparse
