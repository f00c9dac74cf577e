#pragma once
// The timing of wafersim's sparse unit (docs/sparse.md): a streaming format converter and a compute
// path that works on compressed operands, both behind a double-buffered scratchpad that HBM fills
// and drains block by block. Plain C++: hw/sparse/SparseUnit replays it on the NPU's clock, and
// `wafersim sparse-advise` and the conversion study call it directly.
//
// The schedule is lock-step: in step t the HBM port reads input block t and writes the output of
// block t-2 while the datapath works on block t-1, and a step lasts as long as the slower of the
// two. Each block's datapath cycles come from what it holds (non-zeros, rows or columns, RLC
// entries), so a power-law matrix's heavy rows show up as slow steps.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/sparse/format.h"
#include "models/sparse/matrix.h"

namespace wafersim::sparse {

struct UnitParams {
  double clock_ghz = 1.0;            // the NPU's clock (npu.clock_ghz)
  double hbm_bandwidth_gbps = 128;   // the unit's own HBM port (its DMA), 1e9 bytes/s
  int lanes = 8;                     // non-zeros decoded or encoded per cycle
  int macs_per_cycle = 4096;         // multiply-accumulates per cycle on the compute path
  int dense_values_per_cycle = 32;   // dense values compared (decode) or written (encode) per cycle
  int scan_bits_per_cycle = 512;     // bitmap positions a popcount tree examines per cycle
  int segment_cycles = 1;            // cycles a lane spends on a CSR row's / CSC column's pointer
  int pipeline_depth_cycles = 12;    // datapath fill: read, decode, (reorder), encode, write
  uint64_t block_bytes = 32 * 1024;  // one scratchpad input block (two of them, plus two outputs)
  // Holds a transposing conversion's output (CSC <-> row-major): when it does not fit, the input
  // is streamed once per panel of the output that does.
  uint64_t reorder_buffer_bytes = 1 << 20;
  // Holds the dense operand of SpMV / SpMM (x, or B) or the accumulated output of a column-major
  // dataflow; when it does not fit, each use is gathered from HBM in `gather_bytes` bursts.
  uint64_t operand_buffer_bytes = 256 * 1024;
  int gather_bytes = 32;
  Layout layout;
};

// One conversion or kernel, as the unit sees it: operand A's stats in its format, and for SpMM
// either B's stats and format (sparse) or B's column count (dense).
enum class SparseOp { Convert, Spmv, Spmm };
const char* to_string(SparseOp op);
std::optional<SparseOp> parse_op(const std::string& name);

struct SparseJob {
  SparseOp op = SparseOp::Convert;
  Format in = Format::Csr;   // A's format
  Format out = Format::Csr;  // Convert: the result's format
  MatrixStats a;
  uint64_t dense_cols = 1;         // Spmm with a dense B: its columns (B is a.cols x dense_cols)
  std::optional<Format> b_format;  // Spmm with a sparse B
  MatrixStats b;                   // Spmm with a sparse B
  const Matrix* a_data = nullptr;  // when set, blocks are counted on the data (else even spread)
  std::optional<Layout> layout;    // the tensors' widths, when not the unit's default layout
};

// A run of `count` pipeline steps that cost the same: for waveforms (hw/sparse, tb/observe).
struct StepRun {
  uint64_t count = 0;
  uint64_t cycles = 0;          // one step
  uint64_t elements_in = 0;     // entries the datapath decoded in one step
  uint64_t elements_out = 0;    // entries encoded (or MACs) in one step
  uint64_t memory_stall = 0;    // port idle cycles in one step
  uint64_t datapath_stall = 0;  // datapath idle cycles in one step
};

struct UnitTiming {
  uint64_t cycles = 0;                 // the job, first read to last write
  uint64_t memory_cycles = 0;          // HBM port busy
  uint64_t datapath_cycles = 0;        // datapath busy
  uint64_t memory_stall_cycles = 0;    // port idle waiting for the datapath, within steps
  uint64_t datapath_stall_cycles = 0;  // datapath idle waiting for the port, within steps
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t blocks = 0;        // pipeline steps' blocks
  uint64_t passes = 1;        // transposing conversions: input passes (one per output panel)
  uint64_t elements_in = 0;   // entries decoded (non-zeros, RLC fillers, ELL padding, dense values)
  uint64_t elements_out = 0;  // entries encoded, or MACs on the compute path
  double ns(double clock_ghz) const { return static_cast<double>(cycles) / clock_ghz; }
  // With `record_steps`: the schedule, step by step (the pipeline fill and closing pointers, at
  // the end, are not steps).
  std::vector<StepRun> steps;
};

// Adds `part`'s counters (not its steps) to `total`, `repeat` times.
void accumulate(UnitTiming& total, const UnitTiming& part, uint64_t repeat = 1);

UnitTiming time_job(const SparseJob& job, const UnitParams& params, bool record_steps = false);

// For `wafersim sparse-advise` and `format: auto`: each format's size, the unit's cycles to convert
// a dense tensor into it, and (with an op) its SpMV / SpMM cycles; `recommended` is the format with
// the fewest compute cycles (op given; ties to the smaller) or the smallest (no op).
struct FormatAdvice {
  Format format;
  uint64_t bytes;
  uint64_t convert_cycles;
  std::optional<uint64_t> compute_cycles;
};
struct Advice {
  std::vector<FormatAdvice> formats;
  Format recommended;
};
// `op`: Spmv or Spmm (dense B with `dense_cols` columns), or nothing for size alone.
Advice advise(const MatrixStats& a, std::optional<SparseOp> op, uint64_t dense_cols,
              const UnitParams& params);

}  // namespace wafersim::sparse
