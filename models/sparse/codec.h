#pragma once
// Functional codecs: a matrix encoded in each format, decoded back, and converted between any pair
// (decode to the canonical form, encode again). Sizes of the encodings are counted from their
// arrays, so a test can hold them against format_bytes' formulas.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/sparse/format.h"
#include "models/sparse/matrix.h"

namespace wafersim::sparse {

// One matrix in one format; which arrays are used depends on the format.
struct Encoded {
  Format format = Format::Dense;
  uint64_t rows = 0;
  uint64_t cols = 0;
  std::vector<uint64_t> pointers;  // Csr: rows + 1 row starts; Csc: cols + 1 column starts
  std::vector<uint64_t> indices;   // Csr, Ell: columns; Csc: rows; Coo: rows
  std::vector<uint64_t> indices2;  // Coo: columns
  std::vector<uint64_t> bits;      // Bitmap: row-major positions, 64 per word, least bit first
  std::vector<uint64_t> runs;      // Rlc: zeros before each entry
  std::vector<double> values;      // Dense: all; Ell: rows x width (padding 0); else one per entry
  uint64_t width = 0;              // Ell: entries per row

  bool operator==(const Encoded& o) const;
};

// The functional model stores every entry of an encoding in memory: Dense and Bitmap one per
// position, RLC one per non-zero or filler, ELL one per padded slot. It refuses (InputError) an
// encoding of more entries than this; sizes and the unit's timing have no such limit.
constexpr uint64_t kMaxEncodedEntries = uint64_t{1} << 28;

// Calls visit(row, col, value) for each non-zero in the format's storage order (padding and RLC
// fillers skipped).
void for_each_nonzero(const Encoded& e,
                      const std::function<void(uint64_t, uint64_t, double)>& visit);

Encoded encode(const Matrix& m, Format f, const Layout& layout);
Matrix decode(const Encoded& e);
Encoded convert(const Encoded& e, Format to, const Layout& layout);

// The bytes these arrays take in this layout (the same rules as format_bytes).
uint64_t encoded_bytes(const Encoded& e, const Layout& layout);

}  // namespace wafersim::sparse
