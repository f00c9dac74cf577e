#pragma once
// A sparse matrix in its canonical form (its non-zeros in row-major order), and generators of the
// structures DNN and scientific tensors show: uniform random, banded, power-law rows, block-sparse.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/sparse/format.h"

namespace wafersim::sparse {

struct Entry {
  uint64_t row = 0;
  uint64_t col = 0;
  double value = 0;
  bool operator==(const Entry& o) const { return row == o.row && col == o.col && value == o.value; }
};

// Non-zeros sorted by (row, column), none of value zero, no position twice.
struct Matrix {
  uint64_t rows = 0;
  uint64_t cols = 0;
  std::vector<Entry> entries;

  uint64_t nnz() const { return entries.size(); }
  bool operator==(const Matrix& o) const {
    return rows == o.rows && cols == o.cols && entries == o.entries;
  }
  bool operator!=(const Matrix& o) const { return !(*this == o); }
};

// The stats a format's size depends on, counted on the matrix.
MatrixStats stats_of(const Matrix& m, const Layout& layout);

enum class Structure { Uniform, Banded, PowerLaw, Block };
const char* to_string(Structure s);
std::optional<Structure> parse_structure(const std::string& name);
std::string structure_names();

// A matrix of this shape with round(density x rows x cols) non-zeros (Block: whole 8x8 blocks, so
// the count rounds to blocks), values uniform in [-1, 1) without zero, the same for the same seed
// on every machine. Uniform: positions uniformly at random. Banded: a diagonal band just wide
// enough. PowerLaw: row r holds a share of the non-zeros proportional to 1/(r+1) (rows shuffled),
// columns uniform. Block: 8x8 dense blocks placed uniformly.
Matrix generate(uint64_t rows, uint64_t cols, double density, Structure structure, uint64_t seed);

}  // namespace wafersim::sparse
