#include "models/sparse/codec.h"

#include <algorithm>

#include "models/common/error.h"

namespace wafersim::sparse {

bool Encoded::operator==(const Encoded& o) const {
  return format == o.format && rows == o.rows && cols == o.cols && pointers == o.pointers &&
         indices == o.indices && indices2 == o.indices2 && bits == o.bits && runs == o.runs &&
         values == o.values && width == o.width;
}

namespace {

void require_entries_fit(double entries, Format f, const std::string& what) {
  if (entries > static_cast<double>(kMaxEncodedEntries))
    throw InputError("", std::string(to_string(f)) + " encoding",
                     what + " exceed the functional model's limit of 2^28 stored entries");
}

void require_dense_fits(uint64_t rows, uint64_t cols, Format f) {
  require_entries_fit(static_cast<double>(rows) * static_cast<double>(cols), f,
                      std::to_string(rows) + "x" + std::to_string(cols) + " positions");
}

// Compressed rows (by_row) or columns: pointers, the other index, values.
void compress(const Matrix& m, bool by_row, Encoded& e) {
  const uint64_t outer = by_row ? m.rows : m.cols;
  e.pointers.assign(outer + 1, 0);
  for (const Entry& x : m.entries) ++e.pointers[(by_row ? x.row : x.col) + 1];
  for (uint64_t o = 0; o < outer; ++o) e.pointers[o + 1] += e.pointers[o];
  e.indices.resize(m.nnz());
  e.values.resize(m.nnz());
  std::vector<uint64_t> next(e.pointers.begin(), e.pointers.end() - 1);
  // Row-major entries scatter into columns in increasing row order: a stable counting sort.
  for (const Entry& x : m.entries) {
    const uint64_t at = next[by_row ? x.row : x.col]++;
    e.indices[at] = by_row ? x.col : x.row;
    e.values[at] = x.value;
  }
}

}  // namespace

Encoded encode(const Matrix& m, Format f, const Layout& layout) {
  Encoded e;
  e.format = f;
  e.rows = m.rows;
  e.cols = m.cols;
  switch (f) {
    case Format::Dense:
      require_dense_fits(m.rows, m.cols, f);
      e.values.assign(m.rows * m.cols, 0.0);
      for (const Entry& x : m.entries) e.values[x.row * m.cols + x.col] = x.value;
      break;
    case Format::Bitmap:
      require_dense_fits(m.rows, m.cols, f);
      e.bits.assign((m.rows * m.cols + 63) / 64, 0);
      for (const Entry& x : m.entries) {
        const uint64_t at = x.row * m.cols + x.col;
        e.bits[at / 64] |= uint64_t{1} << (at % 64);
        e.values.push_back(x.value);
      }
      break;
    case Format::Rlc: {
      const MatrixStats s = stats_of(m, layout);
      require_entries_fit(static_cast<double>(s.nnz + s.rlc_fillers), f,
                          std::to_string(s.rlc_fillers) + " filler entries for long gaps");
      const uint64_t longest = (uint64_t{1} << layout.run_bits) - 1;
      uint64_t previous_end = 0;
      for (const Entry& x : m.entries) {
        uint64_t gap = x.row * m.cols + x.col - previous_end;
        for (; gap > longest; gap -= longest + 1) {  // filler: `longest` zeros, then a zero value
          e.runs.push_back(longest);
          e.values.push_back(0.0);
        }
        e.runs.push_back(gap);
        e.values.push_back(x.value);
        previous_end = x.row * m.cols + x.col + 1;
      }
      break;
    }
    case Format::Coo:
      for (const Entry& x : m.entries) {
        e.indices.push_back(x.row);
        e.indices2.push_back(x.col);
        e.values.push_back(x.value);
      }
      break;
    case Format::Csr:
    case Format::Csc:
      compress(m, f == Format::Csr, e);
      break;
    case Format::Ell: {
      e.width = stats_of(m, layout).max_row_nnz;
      require_entries_fit(static_cast<double>(m.rows) * static_cast<double>(e.width), f,
                          std::to_string(m.rows) + " rows padded to " + std::to_string(e.width));
      e.indices.assign(m.rows * e.width, 0);
      e.values.assign(m.rows * e.width, 0.0);
      uint64_t row = 0, slot = 0;
      for (const Entry& x : m.entries) {
        if (x.row != row) row = x.row, slot = 0;
        e.indices[row * e.width + slot] = x.col;
        e.values[row * e.width + slot++] = x.value;
      }
      break;
    }
  }
  return e;
}

Matrix decode(const Encoded& e) {
  Matrix m{e.rows, e.cols, {}};
  auto add = [&m](uint64_t row, uint64_t col, double value) {
    if (value != 0.0) m.entries.push_back({row, col, value});
  };
  switch (e.format) {
    case Format::Dense:
      for (uint64_t p = 0; p < e.values.size(); ++p) add(p / e.cols, p % e.cols, e.values[p]);
      break;
    case Format::Bitmap: {
      uint64_t next_value = 0;
      for (uint64_t w = 0; w < e.bits.size(); ++w)
        for (uint64_t word = e.bits[w]; word != 0; word &= word - 1) {
          const uint64_t p = w * 64 + static_cast<uint64_t>(__builtin_ctzll(word));
          add(p / e.cols, p % e.cols, e.values[next_value++]);
        }
      break;
    }
    case Format::Rlc: {
      uint64_t p = 0;
      for (size_t k = 0; k < e.runs.size(); ++k) {
        p += e.runs[k];
        add(p / e.cols, p % e.cols, e.values[k]);  // fillers (value 0) add nothing
        ++p;
      }
      break;
    }
    case Format::Coo:
      for (size_t k = 0; k < e.values.size(); ++k) add(e.indices[k], e.indices2[k], e.values[k]);
      break;
    case Format::Csr:
      for_each_nonzero(e, add);
      break;
    case Format::Csc:  // column by column, then into row-major order
      for_each_nonzero(e, add);
      std::sort(m.entries.begin(), m.entries.end(), [](const Entry& a, const Entry& b) {
        return a.row != b.row ? a.row < b.row : a.col < b.col;
      });
      break;
    case Format::Ell:
      for (uint64_t r = 0; r < e.rows; ++r)
        for (uint64_t s = 0; s < e.width; ++s)
          add(r, e.indices[r * e.width + s], e.values[r * e.width + s]);
      break;
  }
  return m;
}

void for_each_nonzero(const Encoded& e,
                      const std::function<void(uint64_t, uint64_t, double)>& visit) {
  switch (e.format) {
    case Format::Csr:
      for (uint64_t r = 0; r < e.rows; ++r)
        for (uint64_t k = e.pointers[r]; k < e.pointers[r + 1]; ++k)
          visit(r, e.indices[k], e.values[k]);
      return;
    case Format::Csc:
      for (uint64_t c = 0; c < e.cols; ++c)
        for (uint64_t k = e.pointers[c]; k < e.pointers[c + 1]; ++k)
          visit(e.indices[k], c, e.values[k]);
      return;
    default:  // the others are row-major: their canonical decoding keeps the order
      for (const Entry& x : decode(e).entries) visit(x.row, x.col, x.value);
      return;
  }
}

Encoded convert(const Encoded& e, Format to, const Layout& layout) {
  return e.format == to ? e : encode(decode(e), to, layout);
}

uint64_t encoded_bytes(const Encoded& e, const Layout& layout) {
  const uint64_t i = static_cast<uint64_t>(layout.index_bytes);
  const uint64_t v = static_cast<uint64_t>(layout.value_bytes);
  const uint64_t values = e.values.size() * v;
  switch (e.format) {
    case Format::Dense:
      return values;
    case Format::Bitmap:
      return (e.rows * e.cols + 7) / 8 + values;
    case Format::Rlc:
      return (e.runs.size() * static_cast<uint64_t>(layout.run_bits) + 8 * values + 7) / 8;
    case Format::Coo:
      return (e.indices.size() + e.indices2.size()) * i + values;
    case Format::Csr:
    case Format::Csc:
    case Format::Ell:
      return (e.pointers.size() + e.indices.size()) * i + values;
  }
  return 0;
}

}  // namespace wafersim::sparse
