#include "tb/chakra/sparse_workload.h"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "models/sparse/format.h"
#include "tb/chakra/trace.h"

namespace wafersim::chakra {

void check_sparse_mlp(const SparseMlpSpec& spec) {
  if (spec.ranks < 1) throw std::invalid_argument("--ranks: at least 1");
  if (spec.layers < 1) throw std::invalid_argument("--layers: at least 1");
  if (spec.hidden < 1 || spec.batch < 1)
    throw std::invalid_argument("--hidden and --batch: at least 1");
  if (spec.densities.empty()) throw std::invalid_argument("--densities: at least one");
  for (double d : spec.densities)
    if (!(d > 0.0 && d <= 1.0))
      throw std::invalid_argument("--densities: " + std::to_string(d) + " is outside (0, 1]");
  if (spec.format != "auto" && !sparse::parse_format(spec.format))
    throw std::invalid_argument("--sparse-format: '" + spec.format + "' is not auto or one of " +
                                sparse::format_names());
}

namespace {

TraceNode layer_node(const SparseMlpSpec& spec, uint64_t id, const std::string& name,
                     double density) {
  TraceNode n;
  n.id = id;
  n.name = name;
  n.kind = NodeKind::Compute;
  const uint64_t weights = spec.hidden * spec.hidden;
  const uint64_t v = static_cast<uint64_t>(spec.value_bytes);
  if (spec.dense_layers) {
    n.num_ops = 2 * weights * spec.batch;
    n.tensor_size = (weights + 2 * spec.hidden * spec.batch) * v;
    // For the duration model: the roofline time at the default NPU (900 TFLOP/s), whole us.
    n.duration_micros = static_cast<uint64_t>(std::ceil(static_cast<double>(*n.num_ops) / 900e6));
    return n;
  }
  SparseAttrs s;
  s.op = "spmm";
  s.in_format = spec.format;
  s.rows = spec.hidden;
  s.cols = spec.hidden;
  s.density = density;
  s.n = spec.batch;
  s.value_bytes = spec.value_bytes;
  // The narrowest index that holds every row, column and CSR pointer (up to the non-zero count).
  s.index_bytes = weights < 65536 ? 2 : 4;
  n.sparse = s;
  return n;
}

}  // namespace

void write_sparse_mlp(const std::string& prefix, const SparseMlpSpec& spec) {
  check_sparse_mlp(spec);
  const auto dir = std::filesystem::path(prefix).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  Trace t;
  t.version = "0.0.4";
  uint64_t id = 0;
  std::vector<uint64_t> previous;
  auto density_of = [&](int layer) { return spec.densities[layer % spec.densities.size()]; };
  for (int l = 0; l < spec.layers; ++l) {
    TraceNode n = layer_node(spec, id++, "fwd_" + std::to_string(l), density_of(l));
    n.data_deps = previous;
    previous = {n.id};
    t.nodes.push_back(n);
  }
  for (int l = spec.layers - 1; l >= 0; --l) {
    TraceNode n = layer_node(spec, id++, "bwd_" + std::to_string(l), density_of(l));
    n.data_deps = previous;
    previous = {n.id};
    t.nodes.push_back(n);
    if (spec.ranks > 1) {  // the layer's gradients: its non-zero weights
      TraceNode ar;
      ar.id = id++;
      ar.name = "grad_all_reduce_" + std::to_string(l);
      ar.kind = NodeKind::Collective;
      ar.comm_type = static_cast<int64_t>(CollectiveKind::AllReduce);
      const double weights = static_cast<double>(spec.hidden * spec.hidden);
      const double kept = spec.dense_layers ? weights : std::ceil(weights * density_of(l));
      ar.comm_size = static_cast<uint64_t>(kept) * static_cast<uint64_t>(spec.value_bytes);
      ar.data_deps = {n.id};
      t.nodes.push_back(ar);
    }
  }
  for (int r = 0; r < spec.ranks; ++r) write_trace(prefix + "." + std::to_string(r) + ".et", t);
}

}  // namespace wafersim::chakra
