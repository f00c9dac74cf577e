#pragma once
// `wafersim sparse-study FILE --out DIR` (configs/studies/sparse_conversion.yaml, docs/sparse.md):
// the sparse unit's conversion time against software conversion on this machine's CPU, on the same
// matrices, over shapes x densities x structures x conversions (results.csv: shape, structure,
// density, from, to, hw_ns, sw_ns, speedup, sw_impl, hw_bound); and the compactness map: per shape
// and density, the smallest format and the fastest for SpMV and SpMM on the unit (compactness.csv,
// smallest_format.png, fastest_spmv.png).
#include <iosfwd>
#include <string>

namespace wafersim::tb {

int run_sparse_study(const std::string& file, const std::string& out_dir, std::ostream& out);

}  // namespace wafersim::tb
