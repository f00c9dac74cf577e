#include "tb/sparse/sparse_advise.h"

#include <fmt/format.h>

#include <ostream>

#include "models/common/error.h"
#include "models/sparse/unit_model.h"

namespace wafersim::tb {

std::pair<uint64_t, uint64_t> parse_shape(const std::string& text, const std::string& file,
                                          const std::string& item) {
  const size_t x = text.find_first_of("xX");
  try {
    if (x == std::string::npos || text.empty() || text[0] == '-' || text[x + 1] == '-')
      throw std::invalid_argument("shape");
    size_t used = 0;
    const uint64_t rows = std::stoull(text.substr(0, x), &used);
    if (used != x) throw std::invalid_argument("rows");
    const std::string c = text.substr(x + 1);
    const uint64_t cols = std::stoull(c, &used);
    if (used != c.size()) throw std::invalid_argument("cols");
    return {rows, cols};
  } catch (const std::exception&) {
    throw InputError(file, item, "'" + text + "' is not ROWSxCOLS (e.g. 4096x1024)");
  }
}

int sparse_advise(const SparseAdviseOptions& o, std::ostream& out) {
  const auto [rows, cols] = parse_shape(o.shape, "command line", "--shape");
  if (!(o.density >= 0.0 && o.density <= 1.0))
    throw InputError("command line", "--density", fmt::format("{} is outside [0, 1]", o.density));
  std::optional<sparse::SparseOp> op;
  if (!o.op.empty()) {
    op = sparse::parse_op(o.op);
    if (!op || *op == sparse::SparseOp::Convert)
      throw InputError("command line", "--op", "'" + o.op + "' is not spmv or spmm");
  }
  sparse::UnitParams unit;
  if (!o.platform.platform.empty() || !o.platform.astra_network.empty()) {
    const PlatformSpec spec = load_platform_spec(o.platform);
    unit = spec.npu.sparse_unit_params();
  }
  unit.layout.index_bytes = o.index_bytes;
  unit.layout.value_bytes = o.value_bytes;
  const sparse::MatrixStats a = sparse::MatrixStats::even(rows, cols, o.density, unit.layout);
  sparse::check_layout(a, unit.layout, "command line",
                       "--shape, --density, --index-bytes, --value-bytes");
  const sparse::Advice advice = sparse::advise(a, op, o.n, unit);
  out << fmt::format(
      "{}x{} at density {} ({} non-zeros), {}-byte indices, {}-byte values, unit at "
      "{} GHz\n",
      rows, cols, o.density, a.nnz, o.index_bytes, o.value_bytes, unit.clock_ghz);
  const std::string compute =
      op ? (*op == sparse::SparseOp::Spmv ? std::string("spmv_cycles")
                                          : fmt::format("spmm_n{}_cycles", o.n))
         : std::string();
  out << fmt::format("{:<8} {:>16} {:>10} {:>20}", "format", "bytes", "vs_dense", "convert_cycles");
  if (op) out << fmt::format(" {:>20}", compute);
  out << "\n";
  const double dense =
      static_cast<double>(sparse::format_bytes(sparse::Format::Dense, a, unit.layout));
  for (const sparse::FormatAdvice& f : advice.formats) {
    out << fmt::format("{:<8} {:>16} {:>10.4f} {:>20}", sparse::to_string(f.format), f.bytes,
                       dense > 0 ? static_cast<double>(f.bytes) / dense : 0.0, f.convert_cycles);
    if (f.compute_cycles) out << fmt::format(" {:>20}", *f.compute_cycles);
    out << "\n";
  }
  out << "(convert_cycles: from dense; "
      << (op ? "recommended: the fewest " + compute + ", ties to the smaller)\n"
             : "recommended: the smallest)\n");
  out << "recommended: " << sparse::to_string(advice.recommended) << "\n";
  return 0;
}

}  // namespace wafersim::tb
