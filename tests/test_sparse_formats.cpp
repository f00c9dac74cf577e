// models/sparse against Eigen's sparse module, and the sparse unit's streaming datapath
// (hw/sparse/datapath) against models/sparse: the same matrices give the same compressed arrays,
// the same SpMV and SpMM bits; every codec round-trips on edge cases, and its size formula counts
// the bytes its arrays take.
#include <gtest/gtest.h>

#include <Eigen/Sparse>
#include <cstring>

#include "hw/sparse/datapath.h"
#include "models/common/error.h"
#include "models/sparse/codec.h"
#include "models/sparse/kernels.h"

namespace wafersim::sparse {
namespace {

using RowMajor = Eigen::SparseMatrix<double, Eigen::RowMajor, int64_t>;
using ColMajor = Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t>;

template <typename Eig>
Eig to_eigen(const Matrix& m) {
  std::vector<Eigen::Triplet<double, int64_t>> triplets;
  for (const Entry& e : m.entries)
    triplets.emplace_back(static_cast<int64_t>(e.row), static_cast<int64_t>(e.col), e.value);
  Eig out(static_cast<int64_t>(m.rows), static_cast<int64_t>(m.cols));
  out.setFromTriplets(triplets.begin(), triplets.end());
  out.makeCompressed();
  return out;
}

// Bit-for-bit equality (== would also accept -0.0 for 0.0).
bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

std::vector<Matrix> sample_matrices() {
  std::vector<Matrix> out;
  for (Structure s : {Structure::Uniform, Structure::Banded, Structure::PowerLaw, Structure::Block})
    for (double d : {0.001, 0.05, 0.3, 0.9}) out.push_back(generate(61, 47, d, s, 7));
  out.push_back(generate(1, 300, 0.2, Structure::Uniform, 1));       // one row
  out.push_back(generate(300, 1, 0.2, Structure::Uniform, 2));       // one column
  out.push_back(generate(20, 30, 0.0, Structure::Uniform, 3));       // all zeros
  out.push_back(generate(20, 30, 1.0, Structure::Uniform, 4));       // all non-zeros
  out.push_back(generate(700, 900, 0.0005, Structure::Uniform, 5));  // long RLC gaps
  return out;
}

TEST(SparseFormats, EveryCodecRoundTripsAndItsArraysTakeTheBytesItsFormulaSays) {
  const Layout layout;
  for (const Matrix& m : sample_matrices())
    for (Format f : all_formats()) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(m.rows) + "x" +
                   std::to_string(m.cols) + " nnz " + std::to_string(m.nnz()));
      const Encoded e = encode(m, f, layout);
      EXPECT_EQ(decode(e), m);
      EXPECT_EQ(encoded_bytes(e, layout), format_bytes(f, stats_of(m, layout), layout));
    }
}

TEST(SparseFormats, VeryLargeDimensionsWithFewNonZerosRoundTripInTheCompressedFormats) {
  const Layout layout{8, 4, 8};
  Matrix m{
      uint64_t{1} << 32,
      uint64_t{1} << 31,
      {{0, 5, 1.5}, {12345678, 0, -2.0}, {(uint64_t{1} << 32) - 1, (uint64_t{1} << 31) - 1, 3}}};
  EXPECT_EQ(decode(encode(m, Format::Coo, layout)), m);
  // RLC's fillers: the gaps between the three are huge, so nearly all entries are fillers; the
  // functional model refuses to store 2^55 of them, the size formula counts them.
  const MatrixStats s = stats_of(m, layout);
  EXPECT_EQ(s.rlc_fillers, ((12345678ull << 31) - 6) / 256 +
                               (((uint64_t{1} << 63) - 1) - ((12345678ull << 31) + 1)) / 256);
  for (Format f : {Format::Rlc, Format::Ell}) EXPECT_THROW(encode(m, f, layout), InputError);
  EXPECT_THROW(encode(m, Format::Dense, layout), InputError);
  EXPECT_THROW(encode(m, Format::Bitmap, layout), InputError);
  Matrix tall{uint64_t{1} << 24, 3, {{7, 1, 1.0}, {(uint64_t{1} << 24) - 1, 2, 2.0}}};
  for (Format f : {Format::Csr, Format::Csc, Format::Ell})
    EXPECT_EQ(decode(encode(tall, f, layout)), tall);
}

TEST(SparseFormats, SizesOfAHandWorkedMatrix) {
  // 4x6, non-zeros at (0,1) (0,5) (2,0) (2,2) (2,3) (3,5); 2-byte indices, 4-byte values, 2-bit
  // runs (at most 3 zeros a run).
  Matrix m{4, 6, {{0, 1, 1}, {0, 5, 2}, {2, 0, 3}, {2, 2, 4}, {2, 3, 5}, {3, 5, 6}}};
  const Layout layout{2, 4, 2};
  const MatrixStats s = stats_of(m, layout);
  EXPECT_EQ(s.max_row_nnz, 3u);
  // Linear positions 1, 5, 12, 14, 15, 23: gaps 1, 3, 6, 1, 0, 7; 6 -> one filler (3 zeros and
  // its zero value) then a run of 2; 7 -> one filler and a run of 3.
  EXPECT_EQ(s.rlc_fillers, 2u);
  EXPECT_EQ(format_bytes(Format::Dense, s, layout), 24u * 4);
  EXPECT_EQ(format_bytes(Format::Bitmap, s, layout), 3u + 6 * 4);
  EXPECT_EQ(format_bytes(Format::Rlc, s, layout), (8u * (2 + 32) + 7) / 8);
  EXPECT_EQ(format_bytes(Format::Coo, s, layout), 6u * (2 + 2 + 4));
  EXPECT_EQ(format_bytes(Format::Csr, s, layout), 5u * 2 + 6 * 6);
  EXPECT_EQ(format_bytes(Format::Csc, s, layout), 7u * 2 + 6 * 6);
  EXPECT_EQ(format_bytes(Format::Ell, s, layout), 4u * 3 * 6);
  const Encoded rlc = encode(m, Format::Rlc, layout);
  EXPECT_EQ(rlc.runs, (std::vector<uint64_t>{1, 3, 3, 2, 1, 0, 3, 3}));
}

TEST(SparseFormats, CompressedArraysAreEigens) {
  const Layout layout;
  for (const Matrix& m : sample_matrices()) {
    const RowMajor rm = to_eigen<RowMajor>(m);
    const ColMajor cm = to_eigen<ColMajor>(m);
    const Encoded csr = encode(m, Format::Csr, layout), csc = encode(m, Format::Csc, layout);
    ASSERT_EQ(csr.values.size(), static_cast<size_t>(rm.nonZeros()));
    for (uint64_t r = 0; r <= m.rows; ++r)
      EXPECT_EQ(csr.pointers[r], static_cast<uint64_t>(rm.outerIndexPtr()[r]));
    for (uint64_t c = 0; c <= m.cols; ++c)
      EXPECT_EQ(csc.pointers[c], static_cast<uint64_t>(cm.outerIndexPtr()[c]));
    for (size_t k = 0; k < csr.values.size(); ++k) {
      EXPECT_EQ(csr.indices[k], static_cast<uint64_t>(rm.innerIndexPtr()[k]));
      EXPECT_TRUE(same_bits(csr.values[k], rm.valuePtr()[k]));
      EXPECT_EQ(csc.indices[k], static_cast<uint64_t>(cm.innerIndexPtr()[k]));
      EXPECT_TRUE(same_bits(csc.values[k], cm.valuePtr()[k]));
    }
  }
}

TEST(SparseFormats, ConversionBetweenAnyPairIsTheDirectEncoding) {
  const Layout layout;
  const Matrix m = generate(33, 29, 0.2, Structure::PowerLaw, 11);
  for (Format from : all_formats())
    for (Format to : all_formats())
      EXPECT_EQ(convert(encode(m, from, layout), to, layout), encode(m, to, layout))
          << to_string(from) << " -> " << to_string(to);
}

TEST(SparseFormats, SpmvOfEveryFormatIsEigensBitForBit) {
  const Layout layout;
  for (const Matrix& m : sample_matrices()) {
    std::vector<double> x(m.cols);
    for (uint64_t c = 0; c < m.cols; ++c) x[c] = 1.0 / (3.0 + static_cast<double>(c)) - 0.1;
    const Eigen::Map<const Eigen::VectorXd> ex(x.data(), static_cast<int64_t>(x.size()));
    const Eigen::VectorXd by_rows = to_eigen<RowMajor>(m) * ex;
    const Eigen::VectorXd by_cols = to_eigen<ColMajor>(m) * ex;
    for (Format f : all_formats()) {
      const std::vector<double> y = spmv(encode(m, f, layout), x);
      ASSERT_EQ(y.size(), m.rows);
      for (uint64_t r = 0; r < m.rows; ++r) {
        EXPECT_TRUE(same_bits(y[r], by_rows[r])) << to_string(f) << " row " << r;
        EXPECT_TRUE(same_bits(y[r], by_cols[r])) << to_string(f) << " row " << r;
      }
    }
  }
}

TEST(SparseFormats, SpmmWithADenseOrSparseSecondOperandIsEigensBitForBit) {
  const Layout layout;
  const Matrix a = generate(27, 40, 0.15, Structure::Uniform, 21);
  const Matrix b = generate(40, 13, 0.3, Structure::Banded, 22);
  DenseMatrix dense_b{b.rows, b.cols, std::vector<double>(b.rows * b.cols, 0.0)};
  for (const Entry& e : b.entries) dense_b.values[e.row * b.cols + e.col] = e.value;
  const Eigen::MatrixXd eigen_dense =
      to_eigen<ColMajor>(a) * Eigen::MatrixXd(to_eigen<ColMajor>(b));
  const Eigen::MatrixXd eigen_sparse =
      Eigen::MatrixXd(to_eigen<ColMajor>(a) * to_eigen<ColMajor>(b));
  for (Format fa : all_formats()) {
    const Encoded ea = encode(a, fa, layout);
    const DenseMatrix c = spmm(ea, dense_b);
    for (uint64_t r = 0; r < a.rows; ++r)
      for (uint64_t k = 0; k < b.cols; ++k)
        EXPECT_TRUE(same_bits(c.at(r, k), eigen_dense(r, k))) << to_string(fa);
    for (Format fb : all_formats()) {
      const DenseMatrix cs = spmm(ea, encode(b, fb, layout));
      for (uint64_t r = 0; r < a.rows; ++r)
        for (uint64_t k = 0; k < b.cols; ++k)
          EXPECT_TRUE(same_bits(cs.at(r, k), eigen_sparse(r, k)))
              << to_string(fa) << " x " << to_string(fb);
    }
  }
  EXPECT_THROW(spmm(encode(a, Format::Csr, layout), encode(a, Format::Csr, layout)), InputError);
}

TEST(SparseFormats, GeneratorsHitTheirCountAndShape) {
  const Matrix u = generate(100, 80, 0.25, Structure::Uniform, 3);
  EXPECT_EQ(u.nnz(), 2000u);
  EXPECT_EQ(u, generate(100, 80, 0.25, Structure::Uniform, 3));
  EXPECT_NE(u, generate(100, 80, 0.25, Structure::Uniform, 4));
  const Matrix band = generate(100, 100, 0.05, Structure::Banded, 3);
  EXPECT_EQ(band.nnz(), 500u);
  // A band of half-width w holds 100 (2w + 1) - w (w + 1) positions: 494 for w = 2, 688 for 3.
  uint64_t widest = 0;
  for (const Entry& e : band.entries)
    widest = std::max(widest, e.row > e.col ? e.row - e.col : e.col - e.row);
  EXPECT_EQ(widest, 3u);
  const Matrix power = generate(200, 100, 0.1, Structure::PowerLaw, 3);
  EXPECT_EQ(power.nnz(), 2000u);
  EXPECT_GT(stats_of(power, Layout{}).max_row_nnz, 90u);  // the heaviest row: 2000 / H(200) = 341
  const Matrix block = generate(64, 64, 0.25, Structure::Block, 3);
  EXPECT_EQ(block.nnz(), 1024u);  // 16 blocks of 8x8
  for (const Entry& e : block.entries) {
    const uint64_t r0 = e.row / 8 * 8, c0 = e.col / 8 * 8;
    EXPECT_EQ(
        std::count_if(block.entries.begin(), block.entries.end(),
                      [&](const Entry& o) { return o.row / 8 * 8 == r0 && o.col / 8 * 8 == c0; }),
        64);
  }
}

TEST(SparseFormats, ALayoutTooNarrowForTheMatrixIsRefusedWithTheReason) {
  MatrixStats m;
  m.rows = 70000;
  m.cols = 10;
  m.nnz = 5;
  try {
    check_layout(m, Layout{2, 4, 8}, "t.et", "node 3");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("index width 2 bytes cannot hold 69999"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(check_layout(m, Layout{4, 3, 8}, "t.et", "node 3"), InputError);
  m.nnz = 700001;
  EXPECT_THROW(check_layout(m, Layout{}, "t.et", "node 3"), InputError);
}

}  // namespace
}  // namespace wafersim::sparse

namespace wafersim::sparse {
namespace {

// The unit's streaming datapath against the whole-matrix codecs and kernels, for every pair of
// formats and block sizes from one segment to all of them.
TEST(SparseDatapath, StreamingConversionAndKernelsAreTheReferenceBitForBit) {
  const Layout layout{4, 8, 3};  // 3-bit runs: fillers on most gaps
  std::vector<Matrix> matrices = sample_matrices();
  matrices.resize(8);  // uniform and banded at four densities
  matrices.push_back(generate(300, 1, 0.2, Structure::Uniform, 2));
  matrices.push_back(generate(20, 30, 0.0, Structure::Uniform, 3));
  for (const Matrix& m : matrices)
    for (uint64_t per_block : {uint64_t{1}, uint64_t{7}, uint64_t{1000}})
      for (Format from : all_formats()) {
        const Encoded in = encode(m, from, layout);
        for (Format to : all_formats())
          EXPECT_EQ(hw::stream_convert(in, to, layout, per_block), encode(m, to, layout))
              << to_string(from) << " -> " << to_string(to) << " blocks of " << per_block;
        std::vector<double> x(m.cols);
        for (uint64_t c = 0; c < m.cols; ++c) x[c] = 0.37 * static_cast<double>(c % 11) - 1.1;
        const std::vector<double> y = hw::stream_spmv(in, x, per_block), ref = spmv(in, x);
        for (uint64_t r = 0; r < m.rows; ++r) EXPECT_TRUE(same_bits(y[r], ref[r]));
        DenseMatrix b{m.cols, 3, std::vector<double>(m.cols * 3)};
        for (size_t k = 0; k < b.values.size(); ++k)
          b.values[k] = 1.0 / (1.0 + static_cast<double>(k));
        const DenseMatrix c = hw::stream_spmm(in, b, per_block), cref = spmm(in, b);
        for (size_t k = 0; k < c.values.size(); ++k)
          EXPECT_TRUE(same_bits(c.values[k], cref.values[k]));
      }
}

}  // namespace
}  // namespace wafersim::sparse
