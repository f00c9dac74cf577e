#pragma once
// Compression formats of a sparse matrix, and the exact size of each in bytes (docs/sparse.md).
// Plain C++: the sparse unit (hw/sparse), the trace reader and `wafersim sparse-advise` share it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wafersim::sparse {

// Dense: every value, row-major. Bitmap: one bit per position (row-major) and the non-zero values.
// Rlc: row-major run-length coding, each entry a run of zeros (run_bits) and a value; a gap longer
// than the largest run is bridged by filler entries of value zero. Coo: (row, column, value) per
// non-zero, row-major. Csr / Csc: compressed rows / columns (a pointer per row or column plus one,
// then (index, value) per non-zero). Ell: ELLPACK, every row padded to the longest row's length.
enum class Format { Dense, Bitmap, Rlc, Coo, Csr, Csc, Ell };

const std::vector<Format>& all_formats();
const char* to_string(Format f);
// The format named (case-insensitive, as to_string writes it), or nothing.
std::optional<Format> parse_format(const std::string& name);
// "dense, bitmap, rlc, coo, csr, csc, ell": for error messages.
std::string format_names();

// Row-major formats list a row's non-zeros before the next row's; Csc lists columns.
inline bool column_major(Format f) {
  return f == Format::Csc;
}

// How a format stores numbers: the widths that, with the matrix, fix its size.
struct Layout {
  int index_bytes = 4;  // a row or column index, and a CSR/CSC pointer
  int value_bytes = 4;  // a value (fp32 by default; 2 for fp16/bf16, 1 for int8, 8 for fp64)
  int run_bits = 8;     // an RLC run length: runs up to 2^run_bits - 1 zeros
};

// What a format's size depends on, beyond the shape: its non-zeros, its longest row (ELL), and the
// filler entries RLC needs for long gaps.
struct MatrixStats {
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t nnz = 0;
  uint64_t max_row_nnz = 0;  // ELL's width
  uint64_t rlc_fillers = 0;  // RLC entries of value zero that bridge gaps longer than a run

  // The stats of a matrix of this shape whose non-zeros are spread evenly: nnz = round(density x
  // rows x cols), every row with the same count (rounded up for ELL), equal gaps for RLC.
  static MatrixStats even(uint64_t rows, uint64_t cols, double density, const Layout& layout);
  double density() const;
};

// The exact size of a matrix with these stats in this format (bytes). Bitmap and RLC round their
// bits up to whole bytes.
uint64_t format_bytes(Format f, const MatrixStats& m, const Layout& layout);

// Throws InputError(file, item, ...) when the layout cannot hold the matrix: widths out of range,
// or an index width too narrow for its rows, columns or non-zero count.
void check_layout(const MatrixStats& m, const Layout& layout, const std::string& file,
                  const std::string& item);

// The RLC filler entries a gap of `zeros` zero positions needs with runs of `run_bits`.
inline uint64_t rlc_fillers_for_gap(uint64_t zeros, int run_bits) {
  return zeros >> run_bits;  // each filler covers 2^run_bits - 1 zeros and its own zero value
}

}  // namespace wafersim::sparse
