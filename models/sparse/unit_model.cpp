#include "models/sparse/unit_model.h"

#include <algorithm>
#include <cmath>

namespace wafersim::sparse {

const char* to_string(SparseOp op) {
  switch (op) {
    case SparseOp::Convert:
      return "convert";
    case SparseOp::Spmv:
      return "spmv";
    case SparseOp::Spmm:
      return "spmm";
  }
  return "?";
}

std::optional<SparseOp> parse_op(const std::string& name) {
  for (SparseOp op : {SparseOp::Convert, SparseOp::Spmv, SparseOp::Spmm})
    if (name == to_string(op)) return op;
  return std::nullopt;
}

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

// What one block of a matrix holds: `segments` consecutive rows (row-major order) or columns.
struct Slice {
  uint64_t segments = 0;
  uint64_t positions = 0;
  uint64_t nnz = 0;
  uint64_t fillers = 0;  // RLC fillers of its non-zeros' gaps (row-major order)
  bool operator==(const Slice& o) const {
    return segments == o.segments && positions == o.positions && nnz == o.nnz &&
           fillers == o.fillers;
  }
};

// A block's work in one pipeline step: bytes the port reads and writes, datapath cycles.
struct Step {
  uint64_t in_bytes = 0;
  uint64_t out_bytes = 0;
  uint64_t datapath = 0;
  uint64_t elements_in = 0;
  uint64_t elements_out = 0;
};
struct Group {
  uint64_t count;
  Step step;
};

template <typename T>
void append(std::vector<std::pair<uint64_t, T>>& runs, const T& item, uint64_t count = 1) {
  if (count == 0) return;
  if (!runs.empty() && runs.back().second == item)
    runs.back().first += count;
  else
    runs.push_back({count, item});
}

// Blocks of `per_block` segments of a matrix whose non-zeros are spread evenly.
std::vector<std::pair<uint64_t, Slice>> even_slices(uint64_t segments, uint64_t other, uint64_t nnz,
                                                    uint64_t fillers, uint64_t per_block) {
  std::vector<std::pair<uint64_t, Slice>> runs;
  const uint64_t full = segments / per_block, rest = segments % per_block;
  auto share = [&](uint64_t total, uint64_t n) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(total) * n / segments);
  };
  const Slice block{per_block, per_block * other, share(nnz, per_block), share(fillers, per_block)};
  append(runs, block, full);
  if (rest > 0)
    append(runs, Slice{rest, rest * other, nnz - full * block.nnz, fillers - full * block.fillers});
  return runs;
}

// Blocks counted on the data: row-major or column-major order.
std::vector<std::pair<uint64_t, Slice>> data_slices(const Matrix& m, bool by_column,
                                                    uint64_t per_block, const Layout& layout) {
  const uint64_t segments = by_column ? m.cols : m.rows, other = by_column ? m.rows : m.cols;
  const uint64_t blocks = ceil_div(segments, per_block);
  std::vector<Slice> slices(blocks);
  for (uint64_t b = 0; b < blocks; ++b) {
    slices[b].segments = std::min(per_block, segments - b * per_block);
    slices[b].positions = slices[b].segments * other;
  }
  uint64_t previous_end = 0;
  for (const Entry& e : m.entries) {
    Slice& s = slices[(by_column ? e.col : e.row) / per_block];
    ++s.nnz;
    const uint64_t at = e.row * m.cols + e.col;
    if (!by_column) s.fillers += rlc_fillers_for_gap(at - previous_end, layout.run_bits);
    previous_end = at + 1;
  }
  std::vector<std::pair<uint64_t, Slice>> runs;
  for (const Slice& s : slices) append(runs, s);
  return runs;
}

class Model {
 public:
  Model(const SparseJob& job, const UnitParams& p, bool record)
      : job_(job), p_(p), l_(job.layout ? *job.layout : p.layout), record_(record) {
    bytes_per_cycle_ = std::max(1e-9, p.hbm_bandwidth_gbps / p.clock_ghz);
  }

  UnitTiming run() {
    switch (job_.op) {
      case SparseOp::Convert:
        convert();
        break;
      case SparseOp::Spmv:
      case SparseOp::Spmm:
        compute();
        break;
    }
    t_.cycles += static_cast<uint64_t>(p_.pipeline_depth_cycles);
    return t_;
  }

 private:
  // The bytes a slice takes in format f (CSR/CSC: one pointer per segment; the closing pointer is
  // added once per job).
  uint64_t slice_bytes(Format f, const Slice& s) const {
    const uint64_t i = static_cast<uint64_t>(l_.index_bytes),
                   v = static_cast<uint64_t>(l_.value_bytes);
    switch (f) {
      case Format::Dense:
        return s.positions * v;
      case Format::Bitmap:
        return ceil_div(s.positions, 8) + s.nnz * v;
      case Format::Rlc:
        return ceil_div((s.nnz + s.fillers) * (static_cast<uint64_t>(l_.run_bits) + 8 * v), 8);
      case Format::Coo:
        return s.nnz * (2 * i + v);
      case Format::Csr:
      case Format::Csc:
        return s.segments * i + s.nnz * (i + v);
      case Format::Ell:
        return s.segments * job_.a.max_row_nnz * (i + v);
    }
    return 0;
  }

  // Entries a decoder reads (or an encoder writes) for a slice in format f.
  uint64_t elements(Format f, const Slice& s) const {
    switch (f) {
      case Format::Dense:
        return s.positions;
      case Format::Rlc:
        return s.nnz + s.fillers;
      case Format::Ell:
        return s.segments * job_.a.max_row_nnz;
      default:
        return s.nnz;
    }
  }

  // Cycles a decoder (or encoder) spends on a slice in format f.
  uint64_t coder_cycles(Format f, const Slice& s) const {
    const uint64_t lanes = static_cast<uint64_t>(std::max(1, p_.lanes));
    switch (f) {
      case Format::Dense:
        return ceil_div(s.positions, static_cast<uint64_t>(std::max(1, p_.dense_values_per_cycle)));
      case Format::Bitmap:
        return std::max(
            ceil_div(s.positions, static_cast<uint64_t>(std::max(1, p_.scan_bits_per_cycle))),
            ceil_div(s.nnz, lanes));
      case Format::Csr:
      case Format::Csc:
        return ceil_div(s.nnz + s.segments * static_cast<uint64_t>(p_.segment_cycles), lanes);
      default:
        return ceil_div(elements(f, s), lanes);
    }
  }

  uint64_t macs_cycles(uint64_t macs) const {
    return ceil_div(macs, static_cast<uint64_t>(std::max(1, p_.macs_per_cycle)));
  }

  uint64_t memory_cycles(uint64_t bytes) const {
    return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / bytes_per_cycle_ - 1e-9));
  }

  // The blocks of a matrix with these stats, `per_block` segments each, counted on `data` if given.
  std::vector<std::pair<uint64_t, Slice>> slices(const MatrixStats& m, bool by_column, Format f,
                                                 const Matrix* data) const {
    const uint64_t segments = by_column ? m.cols : m.rows, other = by_column ? m.rows : m.cols;
    Slice whole{segments, segments * other, m.nnz, m.rlc_fillers};
    const uint64_t bytes_per_segment = std::max<uint64_t>(1, slice_bytes(f, whole) / segments);
    const uint64_t per_block =
        std::clamp<uint64_t>(p_.block_bytes / bytes_per_segment, 1, segments);
    if (data) return data_slices(*data, by_column, per_block, l_);
    return even_slices(segments, other, m.nnz, m.rlc_fillers, per_block);
  }

  // The lock-step pipeline over these blocks (see unit_model.h), added to the job's timing.
  void pipeline(const std::vector<Group>& groups, uint64_t repeat = 1) {
    std::vector<uint64_t> starts{0};
    for (const Group& g : groups) starts.push_back(starts.back() + g.count);
    const uint64_t blocks = starts.back();
    auto at = [&](int64_t index) -> const Step* {
      if (index < 0 || static_cast<uint64_t>(index) >= blocks) return nullptr;
      auto g = std::upper_bound(starts.begin(), starts.end(), static_cast<uint64_t>(index)) -
               starts.begin() - 1;
      return &groups[static_cast<size_t>(g)].step;
    };
    // Steps t = 0 .. blocks + 1; a run of steps whose three blocks lie in the same groups costs
    // the same, so runs are added whole.
    UnitTiming part;
    for (uint64_t t = 0; t < blocks + 2;) {
      uint64_t next = blocks + 2;
      for (uint64_t d = 0; d < 3; ++d) {
        const int64_t x = static_cast<int64_t>(t) - static_cast<int64_t>(d);
        if (x < 0)
          next = std::min(next, d);
        else if (static_cast<uint64_t>(x) < blocks) {
          auto g = std::upper_bound(starts.begin(), starts.end(), static_cast<uint64_t>(x)) -
                   starts.begin();
          next = std::min(next, starts[static_cast<size_t>(g)] + d);
        }
      }
      const uint64_t run = std::max<uint64_t>(1, next - t);
      const Step* reading = at(static_cast<int64_t>(t));
      const Step* working = at(static_cast<int64_t>(t) - 1);
      const Step* writing = at(static_cast<int64_t>(t) - 2);
      const uint64_t read = reading ? reading->in_bytes : 0;
      const uint64_t written = writing ? writing->out_bytes : 0;
      const uint64_t memory = memory_cycles(read + written);
      const uint64_t datapath = working ? working->datapath : 0;
      const uint64_t step = std::max(memory, datapath);
      part.cycles += run * step;
      part.memory_cycles += run * memory;
      part.datapath_cycles += run * datapath;
      if (working) part.memory_stall_cycles += run * (step - memory);
      if (reading || writing) part.datapath_stall_cycles += run * (step - datapath);
      part.bytes_read += run * read;
      part.bytes_written += run * written;
      if (working) {
        part.elements_in += run * working->elements_in;
        part.elements_out += run * working->elements_out;
      }
      if (record_)
        part.steps.push_back({run, step, working ? working->elements_in : 0,
                              working ? working->elements_out : 0, working ? step - memory : 0,
                              reading || writing ? step - datapath : 0});
      t += run;
    }
    part.blocks = blocks;
    add(part, repeat);
  }

  void add(const UnitTiming& part, uint64_t repeat) {
    accumulate(t_, part, repeat);
    for (uint64_t r = 0; r < repeat && !part.steps.empty(); ++r)
      t_.steps.insert(t_.steps.end(), part.steps.begin(), part.steps.end());
  }

  // The closing CSR/CSC pointer, read or written once.
  void closing_pointer(Format f, bool read) {
    if (f != Format::Csr && f != Format::Csc) return;
    UnitTiming part;
    (read ? part.bytes_read : part.bytes_written) = static_cast<uint64_t>(l_.index_bytes);
    part.cycles = part.memory_cycles = memory_cycles(static_cast<uint64_t>(l_.index_bytes));
    add(part, 1);
  }

  void convert() {
    const MatrixStats& a = job_.a;
    const Format in = job_.in, out = job_.out;
    if (in == out) return;  // nothing to do but the pipeline fill
    closing_pointer(in, true);
    closing_pointer(out, false);
    if (column_major(in) == column_major(out)) {
      std::vector<Group> groups;
      for (auto& [count, s] : slices(a, column_major(in), in, job_.a_data))
        groups.push_back({count, Step{slice_bytes(in, s), slice_bytes(out, s),
                                      std::max(coder_cycles(in, s), coder_cycles(out, s)),
                                      elements(in, s), elements(out, s)}});
      pipeline(groups);
      return;
    }
    // Transposing: gather the input into the reorder buffer, one output panel per pass, then
    // emit the panel in the new order.
    const uint64_t total_out = format_bytes(out, a, l_);
    const uint64_t passes = std::max<uint64_t>(1, ceil_div(total_out, p_.reorder_buffer_bytes));
    const uint64_t lanes = static_cast<uint64_t>(std::max(1, p_.lanes));
    std::vector<Group> gather;
    for (auto& [count, s] : slices(a, column_major(in), in, job_.a_data))
      gather.push_back(
          {count, Step{slice_bytes(in, s), 0, std::max(coder_cycles(in, s), ceil_div(s.nnz, lanes)),
                       elements(in, s), 0}});
    pipeline(gather, passes);
    // The panels' emits, one after each gather pass: counted as one pipeline over the whole
    // output in its order (the fill and drain between passes, a few cycles each, are left out).
    std::vector<Group> emit;
    for (auto& [count, s] : slices(a, column_major(out), out, nullptr))
      emit.push_back(
          {count, Step{0, slice_bytes(out, s), coder_cycles(out, s), 0, elements(out, s)}});
    pipeline(emit);
    t_.passes = passes;
  }

  // Bytes of `useful` fetched in bursts of gather_bytes.
  uint64_t gathered(uint64_t useful) const {
    const uint64_t g = static_cast<uint64_t>(std::max(1, p_.gather_bytes));
    return ceil_div(useful, g) * g;
  }

  void compute() {
    const MatrixStats& a = job_.a;
    const uint64_t i = static_cast<uint64_t>(l_.index_bytes),
                   v = static_cast<uint64_t>(l_.value_bytes);
    const bool spmm = job_.op == SparseOp::Spmm;
    const bool sparse_b = spmm && job_.b_format.has_value();
    const uint64_t n = spmm ? (sparse_b ? job_.b.cols : std::max<uint64_t>(1, job_.dense_cols)) : 1;
    const bool by_column = column_major(job_.in);
    const uint64_t lanes = static_cast<uint64_t>(std::max(1, p_.lanes));
    // The dense operand (x, or B) and the output (y, or C).
    const uint64_t operand_bytes =
        sparse_b ? format_bytes(*job_.b_format, job_.b, l_) : a.cols * n * v;
    const uint64_t output_bytes = a.rows * n * v;
    const bool operand_on_chip = operand_bytes <= p_.operand_buffer_bytes;
    const bool output_on_chip = output_bytes <= p_.operand_buffer_bytes;
    // B's average row (Gustavson, outer product) and column (inner product) lengths.
    const double b_row =
        sparse_b ? static_cast<double>(job_.b.nnz) / std::max<uint64_t>(1, job_.b.rows) : 0;
    const bool inner_product = sparse_b && !by_column && column_major(*job_.b_format);
    const uint64_t b_entry = i + v;

    std::vector<Group> groups;
    closing_pointer(job_.in, true);
    // Row-major A keeps the operand on chip (read once up front) or gathers it per use; column-
    // major A streams the operand's rows in order and keeps the output on chip or spills it.
    if (!by_column && operand_on_chip) groups.push_back({1, Step{operand_bytes, 0, 0, 0, 0}});
    for (auto& [count, s] : slices(a, by_column, job_.in, job_.a_data)) {
      Step step{slice_bytes(job_.in, s), 0, coder_cycles(job_.in, s), elements(job_.in, s), 0};
      const uint64_t macs_per_nz = sparse_b ? static_cast<uint64_t>(std::llround(b_row)) : n;
      uint64_t macs = (job_.in == Format::Dense ? s.positions : s.nnz) * macs_per_nz;
      uint64_t work = macs_cycles(macs);
      if (inner_product) {
        // Each row of A meets each column of B: merge both index lists.
        const uint64_t compares = s.nnz * job_.b.cols + s.segments * job_.b.nnz;
        work = std::max(work, ceil_div(compares, lanes));
        if (!operand_on_chip) step.in_bytes += operand_bytes;  // B streamed again per block
      } else if (!by_column) {
        if (!operand_on_chip)
          step.in_bytes +=
              s.nnz * gathered(sparse_b ? static_cast<uint64_t>(b_row * b_entry) : n * v);
        step.out_bytes += s.segments * n * v;  // this block's rows of the output
      } else {
        step.in_bytes += s.segments * (sparse_b ? static_cast<uint64_t>(b_row * b_entry) : n * v);
        if (!output_on_chip) {  // partial sums read and written back per product row
          const uint64_t spill = s.nnz * gathered(n * v);
          step.in_bytes += spill;
          step.out_bytes += spill;
        }
      }
      step.datapath = std::max(step.datapath, work);
      step.elements_out = macs;
      groups.push_back({count, step});
    }
    if (by_column && output_on_chip) groups.push_back({1, Step{0, output_bytes, 0, 0, 0}});
    pipeline(groups);
  }

  const SparseJob& job_;
  const UnitParams& p_;
  const Layout& l_;
  const bool record_;
  double bytes_per_cycle_ = 1;
  UnitTiming t_;
};

}  // namespace

void accumulate(UnitTiming& total, const UnitTiming& part, uint64_t repeat) {
  total.cycles += repeat * part.cycles;
  total.memory_cycles += repeat * part.memory_cycles;
  total.datapath_cycles += repeat * part.datapath_cycles;
  total.memory_stall_cycles += repeat * part.memory_stall_cycles;
  total.datapath_stall_cycles += repeat * part.datapath_stall_cycles;
  total.bytes_read += repeat * part.bytes_read;
  total.bytes_written += repeat * part.bytes_written;
  total.blocks += repeat * part.blocks;
  total.elements_in += repeat * part.elements_in;
  total.elements_out += repeat * part.elements_out;
}

UnitTiming time_job(const SparseJob& job, const UnitParams& params, bool record_steps) {
  return Model(job, params, record_steps).run();
}

Advice advise(const MatrixStats& a, std::optional<SparseOp> op, uint64_t dense_cols,
              const UnitParams& params) {
  Advice advice{{}, Format::Dense};
  for (Format f : all_formats()) {
    SparseJob convert;
    convert.op = SparseOp::Convert;
    convert.in = Format::Dense;
    convert.out = f;
    convert.a = a;
    FormatAdvice fa{f, format_bytes(f, a, params.layout), time_job(convert, params).cycles, {}};
    if (op) {
      SparseJob kernel;
      kernel.op = *op;
      kernel.in = f;
      kernel.a = a;
      kernel.dense_cols = dense_cols;
      fa.compute_cycles = time_job(kernel, params).cycles;
    }
    advice.formats.push_back(fa);
  }
  auto better = [&](const FormatAdvice& x, const FormatAdvice& y) {
    if (op && *x.compute_cycles != *y.compute_cycles) return *x.compute_cycles < *y.compute_cycles;
    return x.bytes < y.bytes;
  };
  advice.recommended =
      std::min_element(advice.formats.begin(), advice.formats.end(), better)->format;
  return advice;
}

}  // namespace wafersim::sparse
