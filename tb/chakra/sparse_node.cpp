#include "tb/chakra/sparse_node.h"

#include <cmath>

#include "models/common/error.h"

namespace wafersim::chakra {

namespace {

sparse::Layout layout_of(const SparseAttrs& s, int run_bits) {
  return sparse::Layout{static_cast<int>(s.index_bytes), static_cast<int>(s.value_bytes), run_bits};
}

sparse::MatrixStats stats_of_a(const SparseAttrs& s, const sparse::Layout& layout) {
  const double positions = static_cast<double>(s.rows) * static_cast<double>(s.cols);
  const double density = s.nnz ? static_cast<double>(*s.nnz) / positions : *s.density;
  sparse::MatrixStats m = sparse::MatrixStats::even(s.rows, s.cols, density, layout);
  if (s.nnz) m.nnz = *s.nnz;  // exactly as the trace says
  return m;
}

}  // namespace

void check_sparse(const std::string& file, const TraceNode& node) {
  const SparseAttrs& s = *node.sparse;
  const std::string item = "node " + std::to_string(node.id);
  auto fail = [&](const std::string& attribute, const std::string& problem) {
    throw InputError(file, item + " attribute " + attribute, problem);
  };
  if (node.kind != NodeKind::Compute)
    throw InputError(file, item,
                     std::string("sparse_* attributes on a ") + to_string(node.kind) +
                         " node (only COMP nodes run on the sparse unit)");
  const auto op = sparse::parse_op(s.op);
  if (!op) fail("sparse_op", "'" + s.op + "' is not one of convert, spmv, spmm");
  auto check_format = [&](const std::string& attribute, const std::string& name, bool auto_ok) {
    if (auto_ok && name == "auto") return;
    if (!sparse::parse_format(name))
      fail(attribute, (name.empty() ? std::string("missing") : "'" + name + "' is not a format") +
                          " (one of " + sparse::format_names() + (auto_ok ? ", auto)" : ")"));
  };
  check_format("sparse_in_format", s.in_format, true);
  if (*op == sparse::SparseOp::Convert) check_format("sparse_out_format", s.out_format, true);
  if (s.rows == 0) fail("sparse_rows", "missing or zero (the operand's rows)");
  if (s.cols == 0) fail("sparse_cols", "missing or zero (the operand's columns)");
  auto check_density = [&](const std::string& attribute, double d) {
    if (!(d >= 0.0 && d <= 1.0))
      fail(attribute, "density " + std::to_string(d) + " is outside [0, 1]");
  };
  if (s.density && s.nnz) fail("sparse_nnz", "give sparse_density or sparse_nnz, not both");
  if (!s.density && !s.nnz) fail("sparse_density", "missing (or give sparse_nnz)");
  if (s.density) check_density("sparse_density", *s.density);
  if (s.nnz &&
      static_cast<double>(*s.nnz) > static_cast<double>(s.rows) * static_cast<double>(s.cols))
    fail("sparse_nnz", std::to_string(*s.nnz) + " non-zeros do not fit in the " +
                           std::to_string(s.rows) + "x" + std::to_string(s.cols) + " shape");
  if (*op == sparse::SparseOp::Spmm) {
    if (s.n == 0)
      fail("sparse_n", "missing or zero (SpMM's B has sparse_cols rows and sparse_n columns)");
    if (!s.b_format.empty()) {
      check_format("sparse_b_format", s.b_format, false);
      if (!s.b_density) fail("sparse_b_density", "missing (a sparse B needs its density)");
      check_density("sparse_b_density", *s.b_density);
    }
  }
  const sparse::Layout layout = layout_of(s, 8);
  // check_layout names the problem; the attribute is one of the widths or the shape.
  sparse::check_layout(stats_of_a(s, layout), layout, file, item);
}

sparse::SparseJob sparse_job(const SparseAttrs& s, const sparse::UnitParams& unit) {
  sparse::SparseJob job;
  job.layout = layout_of(s, unit.layout.run_bits);
  job.op = *sparse::parse_op(s.op);
  job.a = stats_of_a(s, *job.layout);
  job.dense_cols = std::max<uint64_t>(1, s.n);
  if (!s.b_format.empty()) {
    job.b_format = sparse::parse_format(s.b_format);
    job.b = sparse::MatrixStats::even(s.cols, s.n, *s.b_density, *job.layout);
  }
  sparse::UnitParams params = unit;
  params.layout = *job.layout;
  const auto advised = [&](std::optional<sparse::SparseOp> op) {
    return sparse::advise(job.a, op, job.dense_cols, params).recommended;
  };
  if (job.op == sparse::SparseOp::Convert) {
    job.in = s.in_format == "auto" ? sparse::Format::Dense : *sparse::parse_format(s.in_format);
    job.out = s.out_format == "auto" ? advised(std::nullopt) : *sparse::parse_format(s.out_format);
  } else {
    job.in = s.in_format == "auto" ? advised(job.op) : *sparse::parse_format(s.in_format);
  }
  return job;
}

}  // namespace wafersim::chakra
