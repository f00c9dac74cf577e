#include "hw/sparse/datapath.h"

#include <algorithm>
#include <functional>

namespace wafersim::hw {

using sparse::Encoded;
using sparse::Format;

namespace {

using Visit = std::function<void(uint64_t row, uint64_t col, double value)>;

// The decoder: the non-zeros of segments [first, last) (rows, or columns for CSC) in storage
// order. Cursors carry over from block to block as the hardware's do.
class Decoder {
 public:
  explicit Decoder(const Encoded& e) : e_(e) {}
  uint64_t segments() const { return e_.format == Format::Csc ? e_.cols : e_.rows; }

  void block(uint64_t first, uint64_t last, const Visit& visit) {
    const uint64_t cols = e_.cols;
    switch (e_.format) {
      case Format::Csr:
      case Format::Csc:
        for (uint64_t s = first; s < last; ++s)
          for (uint64_t k = e_.pointers[s]; k < e_.pointers[s + 1]; ++k)
            e_.format == Format::Csr ? visit(s, e_.indices[k], e_.values[k])
                                     : visit(e_.indices[k], s, e_.values[k]);
        return;
      case Format::Dense:
        for (uint64_t p = first * cols; p < last * cols; ++p)
          if (e_.values[p] != 0.0) visit(p / cols, p % cols, e_.values[p]);
        return;
      case Format::Bitmap:
        for (uint64_t p = first * cols; p < last * cols; ++p)
          if (e_.bits[p / 64] >> (p % 64) & 1) visit(p / cols, p % cols, e_.values[cursor_++]);
        return;
      case Format::Coo:
        for (; cursor_ < e_.values.size() && e_.indices[cursor_] < last; ++cursor_)
          visit(e_.indices[cursor_], e_.indices2[cursor_], e_.values[cursor_]);
        return;
      case Format::Rlc:  // position_ is the next position after the last entry decoded
        for (; cursor_ < e_.runs.size() && (position_ + e_.runs[cursor_]) / cols < last;
             ++cursor_) {
          position_ += e_.runs[cursor_];
          if (e_.values[cursor_] != 0.0)
            visit(position_ / cols, position_ % cols, e_.values[cursor_]);
          ++position_;
        }
        return;
      case Format::Ell:
        for (uint64_t r = first; r < last; ++r)
          for (uint64_t s = 0; s < e_.width; ++s)
            if (e_.values[r * e_.width + s] != 0.0)
              visit(r, e_.indices[r * e_.width + s], e_.values[r * e_.width + s]);
        return;
    }
  }

  // Every block in turn.
  void all(uint64_t per_block, const Visit& visit) {
    for (uint64_t first = 0; first < segments(); first += per_block)
      block(first, std::min(segments(), first + per_block), visit);
  }

 private:
  const Encoded& e_;
  uint64_t cursor_ = 0;
  uint64_t position_ = 0;
};

// The encoder: non-zeros arrive in the output's order and are appended.
class Encoder {
 public:
  Encoder(Format f, uint64_t rows, uint64_t cols, uint64_t ell_width, const sparse::Layout& layout)
      : layout_(layout) {
    e_.format = f;
    e_.rows = rows;
    e_.cols = cols;
    e_.width = ell_width;
    if (f == Format::Dense) e_.values.assign(rows * cols, 0.0);
    if (f == Format::Bitmap) e_.bits.assign((rows * cols + 63) / 64, 0);
    if (f == Format::Ell) {
      e_.indices.assign(rows * ell_width, 0);
      e_.values.assign(rows * ell_width, 0.0);
    }
    if (f == Format::Csr || f == Format::Csc) e_.pointers.push_back(0);
  }

  void add(uint64_t row, uint64_t col, double value) {
    const uint64_t at = row * e_.cols + col;
    switch (e_.format) {
      case Format::Dense:
        e_.values[at] = value;
        return;
      case Format::Bitmap:
        e_.bits[at / 64] |= uint64_t{1} << (at % 64);
        e_.values.push_back(value);
        return;
      case Format::Rlc: {
        const uint64_t longest = (uint64_t{1} << layout_.run_bits) - 1;
        uint64_t gap = at - next_;
        for (; gap > longest; gap -= longest + 1) {
          e_.runs.push_back(longest);
          e_.values.push_back(0.0);
        }
        e_.runs.push_back(gap);
        e_.values.push_back(value);
        next_ = at + 1;
        return;
      }
      case Format::Coo:
        e_.indices.push_back(row);
        e_.indices2.push_back(col);
        e_.values.push_back(value);
        return;
      case Format::Csr:
      case Format::Csc: {
        const uint64_t segment = e_.format == Format::Csr ? row : col;
        close_segments_before(segment);
        e_.indices.push_back(e_.format == Format::Csr ? col : row);
        e_.values.push_back(value);
        return;
      }
      case Format::Ell:
        if (row != row_) row_ = row, slot_ = 0;
        e_.indices[row * e_.width + slot_] = col;
        e_.values[row * e_.width + slot_++] = value;
        return;
    }
  }

  Encoded finish() {
    if (e_.format == Format::Csr || e_.format == Format::Csc)
      close_segments_before(e_.format == Format::Csr ? e_.rows : e_.cols);
    return std::move(e_);
  }

 private:
  // Pointers for every segment before `segment` not yet closed.
  void close_segments_before(uint64_t segment) {
    while (e_.pointers.size() <= segment) e_.pointers.push_back(e_.values.size());
  }

  const sparse::Layout& layout_;
  Encoded e_;
  uint64_t next_ = 0;  // RLC: the position after the last entry written
  uint64_t row_ = ~uint64_t{0}, slot_ = 0;
};

}  // namespace

sparse::Encoded stream_convert(const Encoded& in, Format out, const sparse::Layout& layout,
                               uint64_t segments_per_block) {
  Decoder decoder(in);
  const uint64_t per_block = std::max<uint64_t>(1, segments_per_block);
  // ELL's width: counted by a first pass over the input (the hardware's row-length counters).
  uint64_t width = 0;
  if (out == Format::Ell) {
    std::vector<uint64_t> per_row(in.rows, 0);
    Decoder counter(in);
    counter.all(per_block,
                [&](uint64_t r, uint64_t, double) { width = std::max(width, ++per_row[r]); });
  }
  Encoder encoder(out, in.rows, in.cols, width, layout);
  if (sparse::column_major(in.format) == sparse::column_major(out)) {
    decoder.all(per_block, [&](uint64_t r, uint64_t c, double v) { encoder.add(r, c, v); });
    return encoder.finish();
  }
  // The reorder buffer: counting sort by the output's segment, stable in arrival order.
  struct Held {
    uint64_t row, col;
    double value;
  };
  std::vector<Held> held;
  decoder.all(per_block, [&](uint64_t r, uint64_t c, double v) { held.push_back({r, c, v}); });
  const bool by_column = sparse::column_major(out);
  const uint64_t segments = by_column ? in.cols : in.rows;
  std::vector<uint64_t> start(segments + 1, 0);
  for (const Held& h : held) ++start[(by_column ? h.col : h.row) + 1];
  for (uint64_t s = 0; s < segments; ++s) start[s + 1] += start[s];
  std::vector<Held> sorted(held.size());
  for (const Held& h : held) sorted[start[by_column ? h.col : h.row]++] = h;
  for (const Held& h : sorted) encoder.add(h.row, h.col, h.value);
  return encoder.finish();
}

std::vector<double> stream_spmv(const Encoded& a, const std::vector<double>& x,
                                uint64_t segments_per_block) {
  std::vector<double> y(a.rows, 0.0);
  Decoder(a).all(std::max<uint64_t>(1, segments_per_block),
                 [&](uint64_t r, uint64_t c, double v) { y[r] += v * x[c]; });
  return y;
}

sparse::DenseMatrix stream_spmm(const Encoded& a, const sparse::DenseMatrix& b,
                                uint64_t segments_per_block) {
  sparse::DenseMatrix c{a.rows, b.cols, std::vector<double>(a.rows * b.cols, 0.0)};
  Decoder(a).all(std::max<uint64_t>(1, segments_per_block), [&](uint64_t r, uint64_t k, double v) {
    for (uint64_t j = 0; j < b.cols; ++j) c.values[r * b.cols + j] += v * b.at(k, j);
  });
  return c;
}

}  // namespace wafersim::hw
