#pragma once
// `wafersim sparse-advise`: for a tensor's shape and density, each format's size and the sparse
// unit's conversion and compute cycles, then the line `recommended: FORMAT` (docs/sparse.md).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>

#include "tb/run/run.h"

namespace wafersim::tb {

struct SparseAdviseOptions {
  std::string shape;   // "RxC"
  double density = 0;  // [0, 1]
  std::string op;      // "", spmv or spmm
  uint64_t n = 64;     // spmm: B's columns
  int index_bytes = 4;
  int value_bytes = 4;
  RunOptions platform;  // optional --platform / --set: the unit's knobs (npu.sparse_unit.*)
};

// "RxC" as (rows, columns); InputError(file, item, ...) otherwise.
std::pair<uint64_t, uint64_t> parse_shape(const std::string& text, const std::string& file,
                                          const std::string& item);

// Prints the table; returns 0. Throws InputError on bad options.
int sparse_advise(const SparseAdviseOptions& options, std::ostream& out);

}  // namespace wafersim::tb
