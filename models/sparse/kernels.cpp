#include "models/sparse/kernels.h"

#include "models/common/error.h"

namespace wafersim::sparse {

namespace {

void require_inner(uint64_t a_cols, uint64_t b_rows, const char* what) {
  if (a_cols != b_rows)
    throw InputError("", what,
                     "A has " + std::to_string(a_cols) + " columns but the other operand has " +
                         std::to_string(b_rows) + " rows");
}

}  // namespace

std::vector<double> spmv(const Encoded& a, const std::vector<double>& x) {
  require_inner(a.cols, x.size(), "spmv");
  std::vector<double> y(a.rows, 0.0);
  for_each_nonzero(a, [&](uint64_t r, uint64_t c, double v) { y[r] += v * x[c]; });
  return y;
}

DenseMatrix spmm(const Encoded& a, const DenseMatrix& b) {
  require_inner(a.cols, b.rows, "spmm");
  DenseMatrix c{a.rows, b.cols, std::vector<double>(a.rows * b.cols, 0.0)};
  for_each_nonzero(a, [&](uint64_t r, uint64_t k, double v) {
    double* out = &c.values[r * b.cols];
    const double* in = &b.values[k * b.cols];
    for (uint64_t j = 0; j < b.cols; ++j) out[j] += v * in[j];
  });
  return c;
}

DenseMatrix spmm(const Encoded& a, const Encoded& b) {
  require_inner(a.cols, b.rows, "spmm");
  const Matrix rows_of_b = decode(b);  // Gustavson: A's row i scales B's rows
  std::vector<uint64_t> start(b.rows + 1, 0);
  for (const Entry& x : rows_of_b.entries) ++start[x.row + 1];
  for (uint64_t r = 0; r < b.rows; ++r) start[r + 1] += start[r];
  DenseMatrix c{a.rows, b.cols, std::vector<double>(a.rows * b.cols, 0.0)};
  for_each_nonzero(a, [&](uint64_t r, uint64_t k, double v) {
    for (uint64_t t = start[k]; t < start[k + 1]; ++t) {
      const Entry& x = rows_of_b.entries[t];
      c.values[r * b.cols + x.col] += v * x.value;
    }
  });
  return c;
}

}  // namespace wafersim::sparse
