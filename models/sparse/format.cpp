#include "models/sparse/format.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "models/common/error.h"

namespace wafersim::sparse {

const std::vector<Format>& all_formats() {
  static const std::vector<Format> formats = {Format::Dense, Format::Bitmap, Format::Rlc,
                                              Format::Coo,   Format::Csr,    Format::Csc,
                                              Format::Ell};
  return formats;
}

const char* to_string(Format f) {
  switch (f) {
    case Format::Dense:
      return "dense";
    case Format::Bitmap:
      return "bitmap";
    case Format::Rlc:
      return "rlc";
    case Format::Coo:
      return "coo";
    case Format::Csr:
      return "csr";
    case Format::Csc:
      return "csc";
    case Format::Ell:
      return "ell";
  }
  return "?";
}

std::optional<Format> parse_format(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (Format f : all_formats())
    if (lower == to_string(f)) return f;
  return std::nullopt;
}

std::string format_names() {
  std::string names;
  for (Format f : all_formats()) names += (names.empty() ? "" : ", ") + std::string(to_string(f));
  return names;
}

MatrixStats MatrixStats::even(uint64_t rows, uint64_t cols, double density, const Layout& layout) {
  MatrixStats m;
  m.rows = rows;
  m.cols = cols;
  const double positions = static_cast<double>(rows) * static_cast<double>(cols);
  m.nnz = static_cast<uint64_t>(std::llround(std::clamp(density, 0.0, 1.0) * positions));
  if (m.nnz == 0 || rows == 0) return m;
  m.max_row_nnz = (m.nnz + rows - 1) / rows;
  // The zeros before the last non-zero, split into nnz gaps as evenly as whole numbers allow.
  const uint64_t zeros = static_cast<uint64_t>(positions) - m.nnz;
  const uint64_t gap = zeros / m.nnz, longer = zeros % m.nnz;
  m.rlc_fillers = (m.nnz - longer) * rlc_fillers_for_gap(gap, layout.run_bits) +
                  longer * rlc_fillers_for_gap(gap + 1, layout.run_bits);
  return m;
}

double MatrixStats::density() const {
  const double positions = static_cast<double>(rows) * static_cast<double>(cols);
  return positions > 0 ? static_cast<double>(nnz) / positions : 0.0;
}

uint64_t format_bytes(Format f, const MatrixStats& m, const Layout& layout) {
  const uint64_t i = static_cast<uint64_t>(layout.index_bytes);
  const uint64_t v = static_cast<uint64_t>(layout.value_bytes);
  switch (f) {
    case Format::Dense:
      return m.rows * m.cols * v;
    case Format::Bitmap:
      return (m.rows * m.cols + 7) / 8 + m.nnz * v;
    case Format::Rlc: {
      const uint64_t bits =
          (m.nnz + m.rlc_fillers) * (static_cast<uint64_t>(layout.run_bits) + 8 * v);
      return (bits + 7) / 8;
    }
    case Format::Coo:
      return m.nnz * (2 * i + v);
    case Format::Csr:
      return (m.rows + 1) * i + m.nnz * (i + v);
    case Format::Csc:
      return (m.cols + 1) * i + m.nnz * (i + v);
    case Format::Ell:
      return m.rows * m.max_row_nnz * (i + v);
  }
  return 0;
}

void check_layout(const MatrixStats& m, const Layout& layout, const std::string& file,
                  const std::string& item) {
  auto width_ok = [](int w) { return w == 1 || w == 2 || w == 4 || w == 8; };
  if (!width_ok(layout.index_bytes))
    throw InputError(
        file, item,
        "index width " + std::to_string(layout.index_bytes) + " bytes is not one of 1, 2, 4, 8");
  if (!width_ok(layout.value_bytes))
    throw InputError(
        file, item,
        "value width " + std::to_string(layout.value_bytes) + " bytes is not one of 1, 2, 4, 8");
  if (layout.run_bits < 1 || layout.run_bits > 32)
    throw InputError(file, item,
                     "RLC run width " + std::to_string(layout.run_bits) + " bits is outside 1..32");
  if (m.rows == 0 || m.cols == 0)
    throw InputError(file, item,
                     "shape " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                         " has no positions (rows and columns must be at least 1)");
  if (m.rows > (uint64_t{1} << 40) || m.cols > (uint64_t{1} << 40))
    throw InputError(file, item,
                     "shape " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
                         " is larger than 2^40 in a dimension");
  const double positions = static_cast<double>(m.rows) * static_cast<double>(m.cols);
  if (static_cast<double>(m.nnz) > positions)
    throw InputError(file, item,
                     std::to_string(m.nnz) + " non-zeros do not fit in a " +
                         std::to_string(m.rows) + "x" + std::to_string(m.cols) + " matrix");
  // An index holds 0..max; a pointer holds 0..nnz.
  const uint64_t largest = std::max({m.rows - 1, m.cols - 1, m.nnz});
  if (layout.index_bytes < 8 && largest >= (uint64_t{1} << (8 * layout.index_bytes)))
    throw InputError(file, item,
                     "index width " + std::to_string(layout.index_bytes) + " bytes cannot hold " +
                         std::to_string(largest) + " (the largest index or pointer)");
}

}  // namespace wafersim::sparse
