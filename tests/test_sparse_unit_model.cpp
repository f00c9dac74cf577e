// The sparse unit's timing (models/sparse/unit_model) on hand-worked cases: one block, a pipeline
// of identical blocks, cycles that follow the data (RLC fillers), transposing passes, and the
// SpMV operand's place (on chip or gathered). Break-even densities of the size formulas, by hand.
#include <gtest/gtest.h>

#include "models/sparse/unit_model.h"

namespace wafersim::sparse {
namespace {

UnitParams hand_params() {
  UnitParams p;
  p.clock_ghz = 1.0;
  p.hbm_bandwidth_gbps = 128;  // 128 bytes a cycle
  p.lanes = 8;
  p.pipeline_depth_cycles = 12;
  p.layout = Layout{4, 4, 8};
  return p;
}

SparseJob conversion(const MatrixStats& a, Format in, Format out) {
  SparseJob job;
  job.op = SparseOp::Convert;
  job.in = in;
  job.out = out;
  job.a = a;
  return job;
}

TEST(SparseUnitModel, OneBlockIsReadThenConvertedThenWritten) {
  const UnitParams p = hand_params();
  // 64x64 with 256 non-zeros: CSR 64 x 4 + 256 x 8 = 2,304 bytes (18 cycles) plus the closing
  // pointer (1 cycle); COO 256 x 12 = 3,072 bytes (24 cycles); datapath max(decode (256 + 64) / 8,
  // encode 256 / 8) = 40 cycles; pipeline fill 12.
  const UnitTiming t = time_job(
      conversion(MatrixStats::even(64, 64, 1.0 / 16, p.layout), Format::Csr, Format::Coo), p);
  EXPECT_EQ(t.cycles, 18u + 40 + 24 + 1 + 12);
  EXPECT_EQ(t.blocks, 1u);
  EXPECT_EQ(t.bytes_read, 2304u + 4);
  EXPECT_EQ(t.bytes_written, 3072u);
  EXPECT_EQ(t.datapath_cycles, 40u);
  EXPECT_EQ(t.memory_stall_cycles, 40u);         // the port waits while the one block converts
  EXPECT_EQ(t.datapath_stall_cycles, 18u + 24);  // the datapath waits for the read and the write
  EXPECT_EQ(t.elements_in, 256u);
  EXPECT_EQ(t.elements_out, 256u);
}

TEST(SparseUnitModel, IdenticalBlocksOverlapReadsWritesAndWork) {
  UnitParams p = hand_params();
  p.block_bytes = 360;  // ten rows of 36 bytes
  // 640x64, 2,560 non-zeros: 64 blocks of 10 rows and 40 non-zeros. A block reads 360 bytes
  // (3 cycles), writes 480 (4), converts in max((40 + 10) / 8, 40 / 8) = 7. Steps: read 3; then
  // 64 steps of max(memory, 7) = 7 (reads plus writes take ceil(840 / 128) = 7); write 4.
  const UnitTiming t = time_job(
      conversion(MatrixStats::even(640, 64, 1.0 / 16, p.layout), Format::Csr, Format::Coo), p);
  EXPECT_EQ(t.blocks, 64u);
  EXPECT_EQ(t.cycles, 3u + 64 * 7 + 4 + 1 + 12);
  EXPECT_EQ(t.bytes_read, 64u * 360 + 4);
  EXPECT_EQ(t.bytes_written, 64u * 480);
}

TEST(SparseUnitModel, DecodingCyclesFollowTheRunsInTheData) {
  const UnitParams p = hand_params();
  // 16x1024 with 16 non-zeros. Down column 0, each gap after the first is 1,023 zeros: three
  // fillers each with 8-bit runs, 45 in all, 61 entries of 5 bytes (3 cycles), decoded in
  // ceil(61 / 8) = 8 cycles. Along row 0 there are no fillers: 16 entries (1 cycle), 2 cycles.
  // Either way CSR is 16 x 4 + 16 x 8 = 192 bytes (2 cycles) plus its closing pointer (1), and
  // encoding takes (16 + 16) / 8 = 4 cycles.
  Matrix column{16, 1024, {}}, row{16, 1024, {}};
  for (uint64_t k = 0; k < 16; ++k) {
    column.entries.push_back({k, 0, 1.0});
    row.entries.push_back({0, k, 1.0});
  }
  auto cycles = [&](const Matrix& m) {
    SparseJob job = conversion(stats_of(m, p.layout), Format::Rlc, Format::Csr);
    job.a_data = &m;
    return time_job(job, p).cycles;
  };
  EXPECT_EQ(stats_of(column, p.layout).rlc_fillers, 45u);
  EXPECT_EQ(cycles(column), 3u + 8 + 2 + 1 + 12);
  EXPECT_EQ(cycles(row), 1u + 4 + 2 + 1 + 12);
}

TEST(SparseUnitModel, ATransposeThatOverflowsTheReorderBufferReadsTheInputOncePerPanel) {
  UnitParams p = hand_params();
  const MatrixStats a = MatrixStats::even(64, 64, 1.0 / 16, p.layout);
  p.reorder_buffer_bytes = 1000;  // CSC output 65 x 4 + 256 x 8 = 2,308 bytes: 3 panels
  const UnitTiming t = time_job(conversion(a, Format::Csr, Format::Csc), p);
  EXPECT_EQ(t.passes, 3u);
  EXPECT_EQ(t.bytes_read, 3u * 2304 + 4);
  EXPECT_EQ(t.bytes_written, 2308u);
  p.reorder_buffer_bytes = 4096;
  EXPECT_EQ(time_job(conversion(a, Format::Csr, Format::Csc), p).passes, 1u);
  EXPECT_LT(time_job(conversion(a, Format::Csr, Format::Csc), p).cycles, t.cycles);
}

TEST(SparseUnitModel, SpmvGathersItsVectorWhenTheOperandBufferCannotHoldIt) {
  UnitParams p = hand_params();
  SparseJob job;
  job.op = SparseOp::Spmv;
  job.in = Format::Csr;
  job.a = MatrixStats::even(64, 64, 1.0 / 16, p.layout);
  const UnitTiming on_chip = time_job(job, p);
  // x: 64 x 4 = 256 bytes read once; y: 64 x 4 written; A: 2,304 + 4.
  EXPECT_EQ(on_chip.bytes_read, 256u + 2304 + 4);
  EXPECT_EQ(on_chip.bytes_written, 256u);
  EXPECT_EQ(on_chip.elements_out, 256u);  // one MAC per non-zero
  p.operand_buffer_bytes = 128;
  const UnitTiming gathered = time_job(job, p);
  EXPECT_EQ(gathered.bytes_read, 256u * 32 + 2304 + 4);  // a 32-byte burst per non-zero
  EXPECT_GT(gathered.cycles, on_chip.cycles);
}

// The density where two formats take the same bytes, found on the size formulas by bisection.
double break_even(Format a, Format b, uint64_t rows, uint64_t cols, const Layout& layout) {
  double lo = 0, hi = 1;
  auto diff = [&](double d) {
    const MatrixStats m = MatrixStats::even(rows, cols, d, layout);
    return static_cast<double>(format_bytes(a, m, layout)) -
           static_cast<double>(format_bytes(b, m, layout));
  };
  const bool a_smaller_at_zero = diff(0) < 0;
  for (int k = 0; k < 60; ++k) {
    const double mid = (lo + hi) / 2;
    ((diff(mid) < 0) == a_smaller_at_zero ? lo : hi) = mid;
  }
  return lo;
}

TEST(SparseUnitModel, BreakEvenDensitiesAreTheHandWorkedOnes) {
  const Layout l{4, 4, 8};
  const uint64_t r = 1024, c = 1024;
  const double n = static_cast<double>(r * c);
  // CSR = dense: (r + 1) i + d n (i + v) = n v  ->  d = (n v - (r + 1) i) / (n (i + v)).
  EXPECT_NEAR(break_even(Format::Csr, Format::Dense, r, c, l), (n * 4 - (r + 1) * 4) / (n * 8),
              1e-5);
  // Bitmap = dense: n / 8 + d n v = n v  ->  d = 1 - 1 / (8 v).
  EXPECT_NEAR(break_even(Format::Bitmap, Format::Dense, r, c, l), 1 - 1.0 / 32, 1e-5);
  // CSR = bitmap: (r + 1) i + d n (i + v) = n / 8 + d n v  ->  d = (n / 8 - (r + 1) i) / (n i).
  EXPECT_NEAR(break_even(Format::Csr, Format::Bitmap, r, c, l), (n / 8 - (r + 1) * 4) / (n * 4),
              1e-5);
  // COO = CSR: d n (2i + v) = (r + 1) i + d n (i + v)  ->  d = (r + 1) / n.
  EXPECT_NEAR(break_even(Format::Coo, Format::Csr, r, c, l), (r + 1) / n, 1e-5);
  // RLC (no fillers while gaps stay under 256) = bitmap: d n (run + 8v) / 8 = n / 8 + d n v ->
  // d = 1 / run_bits.
  EXPECT_NEAR(break_even(Format::Rlc, Format::Bitmap, r, c, l), 1.0 / 8, 1e-5);
}

TEST(SparseUnitModel, AdviceRecommendsTheSmallestOrTheFastest) {
  const UnitParams p = hand_params();
  const MatrixStats very_sparse = MatrixStats::even(4096, 4096, 0.001, p.layout);
  // Above 1 - 1 / 32 of non-zeros a bitmap costs more than it saves.
  const MatrixStats nearly_dense = MatrixStats::even(4096, 4096, 0.99, p.layout);
  EXPECT_EQ(advise(MatrixStats::even(4096, 4096, 0.95, p.layout), std::nullopt, 1, p).recommended,
            Format::Bitmap);
  EXPECT_EQ(advise(nearly_dense, std::nullopt, 1, p).recommended, Format::Dense);
  const Advice sparse = advise(very_sparse, SparseOp::Spmv, 1, p);
  EXPECT_NE(sparse.recommended, Format::Dense);
  EXPECT_NE(sparse.recommended, Format::Bitmap);
  for (const FormatAdvice& f : sparse.formats) {
    EXPECT_EQ(f.bytes, format_bytes(f.format, very_sparse, p.layout));
    ASSERT_TRUE(f.compute_cycles.has_value());
  }
  // COO beats CSR below (r + 1) / n = 1 / 4096 (CSC ties CSR on a square matrix: CSR listed first).
  EXPECT_EQ(advise(very_sparse, std::nullopt, 1, p).recommended, Format::Csr);
  EXPECT_EQ(advise(MatrixStats::even(4096, 4096, 0.0001, p.layout), std::nullopt, 1, p).recommended,
            Format::Coo);
}

}  // namespace
}  // namespace wafersim::sparse
