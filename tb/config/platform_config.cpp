// Reads wafersim YAML platforms. Every key is dispatched through one table, so an unknown or
// mistyped key is an error rather than a silent default (docs/config.md).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "models/common/error.h"
#include "tb/config/platform_spec.h"
#include "tb/config/yaml_file.h"

namespace wafersim::tb {

namespace fs = std::filesystem;

namespace {

using Setter = std::function<void(PlatformSpec&, const std::string& value)>;

// Limits (docs/config.md): beyond them a run would not fit this machine's time or memory, or
// SystemC's picosecond clock could not represent its cycles.
constexpr double kMaxNpus = 4096;
constexpr double kMaxDelayCycles = 1e6;
constexpr double kMaxSplits = 4096;
// A link slower than this takes more than 2^64 ps for a large message.
constexpr double kMinBandwidthGbps = 1e-3;

double to_double(const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size() && std::isfinite(d)) return d;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("not a number: '" + v + "'");
}

// A value given once for every dimension or once per dimension: "ring" or "ring,direct,ring".
std::vector<std::string> per_dimension(const std::string& value) {
  std::vector<std::string> items;
  size_t from = 0;
  for (;;) {
    const size_t comma = value.find(',', from);
    items.push_back(value.substr(from, comma == std::string::npos ? comma : comma - from));
    if (comma == std::string::npos) return items;
    from = comma + 1;
  }
}

// A numeric key: its lower bound (inclusive or not) and its upper bound (inclusive), which keeps
// every run within the time and memory this machine has (docs/config.md, "Limits").
template <typename Field>
Setter number(Field field, double min, bool inclusive, double max) {
  return [field, min, inclusive, max](PlatformSpec& s, const std::string& v) {
    using T = std::remove_reference_t<decltype(field(s))>;
    const double d = to_double(v);
    if (inclusive ? d < min : d <= min)
      throw std::invalid_argument("must be " + std::string(inclusive ? ">= " : "> ") +
                                  fmt::format("{:g}", min) + ", got " + v);
    if (d > max)
      throw std::invalid_argument("must be at most " + fmt::format("{:g}", max) + ", got " + v +
                                  " (docs/config.md, Limits)");
    if constexpr (!std::is_floating_point_v<T>)
      if (d != std::floor(d)) throw std::invalid_argument("must be a whole number, got " + v);
    field(s) = static_cast<T>(d);
  };
}

#define FIELD(path)               \
  [](PlatformSpec & s) -> auto& { \
    return s.path;                \
  }

// collectives.active_chunks: one limit for every dimension, or one per dimension ("1,2,1").
Setter active_chunks() {
  return [](PlatformSpec& s, const std::string& v) {
    std::vector<int> limits;
    for (const std::string& item : per_dimension(v)) {
      int limit = 0;
      number([&limit](PlatformSpec&) -> int& { return limit; }, 0, true, kMaxSplits)(s, item);
      limits.push_back(limit);
    }
    s.collectives.active_chunks = limits.front();
    s.collectives.active_chunks_per_dim = limits.size() > 1 ? limits : std::vector<int>{};
  };
}

// A key whose value is one of a few names.
template <typename Field>
using FieldType = std::remove_reference_t<std::invoke_result_t<Field, PlatformSpec&>>;

template <typename Field>
Setter choice(Field field, std::vector<std::pair<std::string, FieldType<Field>>> names) {
  return [field, names](PlatformSpec& s, const std::string& v) {
    std::string expected;
    for (const auto& [name, value] : names) {
      if (v == name) {
        field(s) = value;
        return;
      }
      expected += (expected.empty() ? "" : " or ") + name;
    }
    throw std::invalid_argument("expected " + expected + ", got '" + v + "'");
  };
}

Setter algorithm(Implementation CollectiveConfig::*field) {
  return [field](PlatformSpec& s, const std::string& v) {
    s.collectives.*field = implementation_from_string(v);
  };
}

// network.dimensions.<i>.<key>: dimension i of a network of several dimensions (in YAML, item i
// of the list `network.dimensions`). Naming a dimension makes the network one of dimensions; a
// dimension named beyond the list's end grows it, and check_platform refuses one left incomplete.
constexpr int kMaxDimensions = 8;

Setter dimension_setter(int index, const std::string& key) {
  auto dim = [index](PlatformSpec& s) -> topology::Dimension& {
    s.network.shape = topology::Shape::Dimensions;
    if (static_cast<int>(s.network.dims.size()) <= index) {
      topology::Dimension unset;
      unset.shape = topology::Shape::Mesh;  // "no shape yet"
      s.network.dims.resize(index + 1, unset);
    }
    return s.network.dims[index];
  };
  if (key == "shape")
    return [dim](PlatformSpec& s, const std::string& v) {
      topology::Shape shape = topology::Shape::Mesh;
      try {
        shape = topology::shape_from_string(v);
      } catch (const std::invalid_argument&) {
      }
      if (shape != topology::Shape::Ring && shape != topology::Shape::FullyConnected &&
          shape != topology::Shape::Switch)
        throw std::invalid_argument("expected ring, fully_connected or switch, got '" + v + "'");
      dim(s).shape = shape;
    };
  if (key == "npus")
    return number(
        [dim](PlatformSpec & s) -> auto& { return dim(s).npus; }, 1, true, kMaxNpus);
  if (key == "link_bandwidth_gbps")
    return number(
        [dim](PlatformSpec & s) -> auto& { return dim(s).link_bandwidth_gbps; }, kMinBandwidthGbps,
        true, 1e6);
  if (key == "link_latency_ns")
    return number(
        [dim](PlatformSpec & s) -> auto& { return dim(s).link_latency_ns; }, 0, true, 1e9);
  if (key == "links")
    return number(
        [dim](PlatformSpec & s) -> auto& { return dim(s).links; }, 1, true, 64);
  return nullptr;
}

// The setter of "network.dimensions.<i>.<key>", or nullptr if `key` is not one.
Setter dimension_key(const std::string& key) {
  static const std::string prefix = "network.dimensions.";
  if (key.compare(0, prefix.size(), prefix) != 0) return nullptr;
  const size_t dot = key.find('.', prefix.size());
  if (dot == std::string::npos) return nullptr;
  const std::string index = key.substr(prefix.size(), dot - prefix.size());
  if (index.empty() || index.size() > 2 ||
      index.find_first_not_of("0123456789") != std::string::npos)
    return nullptr;
  const int i = std::stoi(index);
  if (i >= kMaxDimensions)
    throw std::invalid_argument(
        fmt::format("at most {} dimensions (docs/config.md, Limits)", kMaxDimensions));
  return dimension_setter(i, key.substr(dot + 1));
}

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"network.topology",
       [](PlatformSpec& s, const std::string& v) {
         s.network.shape = topology::shape_from_string(v);
       }},
      {"network.npus", number(FIELD(network.npus), 1, true, kMaxNpus)},
      {"network.mesh_x", number(FIELD(network.mesh_x), 1, true, kMaxNpus)},
      {"network.mesh_y", number(FIELD(network.mesh_y), 1, true, kMaxNpus)},
      {"network.clock_ghz", number(FIELD(network.clock_ghz), 1e-3, true, 1000)},
      {"network.link_bandwidth_gbps",
       number(FIELD(network.link_bandwidth_gbps), kMinBandwidthGbps, true, 1e6)},
      {"network.link_bandwidth_y_gbps",
       number(FIELD(network.link_bandwidth_y_gbps), kMinBandwidthGbps, true, 1e6)},
      {"network.link_latency_ns", number(FIELD(network.link_latency_ns), 0, true, 1e9)},
      {"network.injection_bandwidth_gbps",
       number(FIELD(network.injection_bandwidth_gbps), 0, true, 1e6)},
      {"network.injection_latency_ns", number(FIELD(network.injection_latency_ns), 0, true, 1e9)},
      {"network.leaf_npus", number(FIELD(network.leaf_npus), 1, true, kMaxNpus)},
      {"network.uplinks", number(FIELD(network.uplinks), 1, true, 64)},
      {"network.uplink_bandwidth_gbps",
       number(FIELD(network.uplink_bandwidth_gbps), kMinBandwidthGbps, true, 1e6)},
      {"network.uplink_latency_ns", number(FIELD(network.uplink_latency_ns), 0, true, 1e9)},
      {"network.switch", choice(FIELD(network.fred_switches), {{"router", false}, {"fred", true}})},
      {"network.io_controllers", number(FIELD(network.io_controllers), 0, true, kMaxNpus)},
      {"network.io_bandwidth_gbps",
       number(FIELD(network.io_bandwidth_gbps), kMinBandwidthGbps, true, 1e6)},
      {"network.io_latency_ns", number(FIELD(network.io_latency_ns), 0, true, 1e9)},
      {"collectives.dimension_order",
       choice(FIELD(collectives.dimension_order),
              {{"ascending", collectives::DimensionOrder::Ascending},
               {"themis", collectives::DimensionOrder::Themis},
               {"all_reduce_each", collectives::DimensionOrder::AllReduceEach}})},
      {"collectives.queue_policy", choice(FIELD(collectives.queue_policy),
                                          {{"fifo", collectives::QueuePolicy::Fifo},
                                           {"scf", collectives::QueuePolicy::SmallestChunkFirst}})},
      {"collectives.scheduler",
       choice(FIELD(collectives.scheduler), {{"planned", collectives::QueueScheduler::Planned},
                                             {"runtime", collectives::QueueScheduler::Runtime}})},
      {"collectives.collective_priority",
       choice(FIELD(collectives.collective_priority),
              {{"fifo", collectives::CollectivePriority::Fifo},
               {"lifo", collectives::CollectivePriority::Lifo}})},
      {"fabric.fidelity",
       [](PlatformSpec& s, const std::string& v) {
         s.fabric.fidelity = hw::fidelity_from_string(v);
       }},
      {"fabric.flit_bytes", number(FIELD(fabric.flit_bytes), 1, true, 1 << 20)},
      {"fabric.packet_bytes", number(FIELD(fabric.packet_bytes), 1, true, 1 << 30)},
      {"fabric.header_bytes", number(FIELD(fabric.header_bytes), 0, true, 1 << 20)},
      {"fabric.vcs", number(FIELD(fabric.vcs), 1, true, 64)},
      {"fabric.buffer_flits", number(FIELD(fabric.buffer_flits), 1, true, 65536)},
      {"fabric.routing_delay_cycles",
       number(FIELD(fabric.routing_delay_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.vc_alloc_delay_cycles",
       number(FIELD(fabric.vc_alloc_delay_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.sw_alloc_delay_cycles",
       number(FIELD(fabric.sw_alloc_delay_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.sw_alloc_iterations", number(FIELD(fabric.sw_alloc_iterations), 1, true, 16)},
      {"fabric.vc_release", choice(FIELD(fabric.vc_release_on_tail_credit),
                                   {{"tail_sent", false}, {"tail_credit", true}})},
      {"fabric.switch_traversal_delay_cycles",
       number(FIELD(fabric.switch_traversal_delay_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.credit_delay_cycles",
       number(FIELD(fabric.credit_delay_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.endpoint_delay_cycles",
       number(FIELD(fabric.endpoint_delay_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.fred_middles", number(FIELD(fabric.fred_middles), 2, true, 64)},
      {"fabric.fred_conflicts", choice(FIELD(fabric.fred_conflicts),
                                       {{"wait", hw::FabricParams::FredConflicts::Wait},
                                        {"error", hw::FabricParams::FredConflicts::Error},
                                        {"unicast", hw::FabricParams::FredConflicts::Unicast}})},
      {"fabric.fred_reconfiguration_cycles",
       number(FIELD(fabric.fred_reconfiguration_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.fred_stage_cycles",
       number(FIELD(fabric.fred_stage_cycles), 0, true, kMaxDelayCycles)},
      {"fabric.link_retry",
       choice(FIELD(fabric.go_back_n), {{"none", false}, {"go_back_n", true}})},
      {"fabric.ack_every_packets", number(FIELD(fabric.ack_every_packets), 1, true, 65536)},
      {"fabric.retransmit_timeout_cycles",
       number(FIELD(fabric.retransmit_timeout_cycles), 1, true, kMaxDelayCycles)},
      {"fabric.link_drop_probability", number(FIELD(fabric.drop_probability), 0, true, 0.5)},
      {"fabric.link_corrupt_probability", number(FIELD(fabric.corrupt_probability), 0, true, 0.5)},
      {"fabric.fault_seed", number(FIELD(fabric.fault_seed), 0, true, 9007199254740991.0)},
      {"npu.clock_ghz", number(FIELD(npu.clock_ghz), 1e-3, true, 1000)},
      {"npu.peak_tflops", number(FIELD(npu.peak_tflops), 1e-6, true, 1e9)},
      {"npu.hbm_bandwidth_gbps",
       number(FIELD(npu.hbm_bandwidth_gbps), kMinBandwidthGbps, true, 1e9)},
      {"npu.reduce_bandwidth_gbps",
       number(FIELD(npu.reduce_bandwidth_gbps), kMinBandwidthGbps, true, 1e9)},
      {"npu.reduce_engines", number(FIELD(npu.reduce_engines), 1, true, 1024)},
      {"npu.sparse_unit.hbm_bandwidth_gbps",
       number(FIELD(npu.sparse_unit.hbm_bandwidth_gbps), kMinBandwidthGbps, true, 1e9)},
      {"npu.sparse_unit.lanes", number(FIELD(npu.sparse_unit.lanes), 1, true, 4096)},
      {"npu.sparse_unit.macs_per_cycle",
       number(FIELD(npu.sparse_unit.macs_per_cycle), 1, true, 1 << 20)},
      {"npu.sparse_unit.dense_values_per_cycle",
       number(FIELD(npu.sparse_unit.dense_values_per_cycle), 1, true, 1 << 20)},
      {"npu.sparse_unit.scan_bits_per_cycle",
       number(FIELD(npu.sparse_unit.scan_bits_per_cycle), 1, true, 1 << 20)},
      {"npu.sparse_unit.segment_cycles",
       number(FIELD(npu.sparse_unit.segment_cycles), 0, true, 1024)},
      {"npu.sparse_unit.pipeline_depth_cycles",
       number(FIELD(npu.sparse_unit.pipeline_depth_cycles), 0, true, kMaxDelayCycles)},
      {"npu.sparse_unit.block_bytes", number(FIELD(npu.sparse_unit.block_bytes), 64, true, 1e12)},
      {"npu.sparse_unit.reorder_buffer_bytes",
       number(FIELD(npu.sparse_unit.reorder_buffer_bytes), 64, true, 1e12)},
      {"npu.sparse_unit.operand_buffer_bytes",
       number(FIELD(npu.sparse_unit.operand_buffer_bytes), 0, true, 1e12)},
      {"npu.sparse_unit.gather_bytes", number(FIELD(npu.sparse_unit.gather_bytes), 1, true, 4096)},
      {"npu.sparse_unit.run_bits", number(FIELD(npu.sparse_unit.layout.run_bits), 1, true, 32)},
      {"npu.compute_model", choice(FIELD(compute), {{"duration", ComputeModel::Duration},
                                                    {"roofline", ComputeModel::Roofline}})},
      {"npu.compute_order", choice(FIELD(compute_order), {{"node_id", ComputeOrder::NodeId},
                                                          {"ready", ComputeOrder::Ready}})},
      {"npu.comm_order", choice(FIELD(comm_order), {{"concurrent", CommOrder::Concurrent},
                                                    {"node_id", CommOrder::NodeId}})},
      {"collectives.all_reduce", algorithm(&CollectiveConfig::all_reduce)},
      {"collectives.all_gather", algorithm(&CollectiveConfig::all_gather)},
      {"collectives.reduce_scatter", algorithm(&CollectiveConfig::reduce_scatter)},
      {"collectives.all_to_all", algorithm(&CollectiveConfig::all_to_all)},
      {"collectives.broadcast", algorithm(&CollectiveConfig::broadcast)},
      {"collectives.reduce", algorithm(&CollectiveConfig::reduce)},
      {"collectives.dataset_splits",
       number(FIELD(collectives.dataset_splits), 1, true, kMaxSplits)},
      {"collectives.active_chunks", active_chunks()},
      {"collectives.ring_path", choice(FIELD(collectives.ring_path),
                                       {{"ranks", CollectiveConfig::RingPath::Ranks},
                                        {"mesh_cycle", CollectiveConfig::RingPath::MeshCycle}})},
      {"collectives.verify_max_ops", number(FIELD(collectives.verify_max_ops), 0, true, 1e10)},
      {"collectives.tacos_chunks_per_npu",
       number(FIELD(collectives.tacos_chunks_per_npu), 1, true, 4096)},
      {"collectives.tacos_seed", number(FIELD(collectives.tacos_seed), 0, true, 1e15)},
  };
  return table;
}

void set_key(PlatformSpec& spec, const std::string& file, const std::string& key,
             const std::string& value) {
  Setter setter;
  try {
    auto it = setters().find(key);
    setter = it != setters().end() ? it->second : dimension_key(key);
  } catch (const std::exception& e) {
    throw InputError(file, "key '" + key + "'", e.what());
  }
  if (!setter) throw InputError(file, "key '" + key + "'", "unknown key (see docs/config.md)");
  try {
    setter(spec, value);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(file, "key '" + key + "'", e.what());
  }
}

// network.dimensions: a list of mappings, dimension 0 first.
void set_dimensions(PlatformSpec& spec, const std::string& file, const YAML::Node& list) {
  if (!list.IsSequence() || list.size() == 0)
    throw InputError(file, "key 'network.dimensions'",
                     "expected a list of dimensions (shape, npus, link_bandwidth_gbps, ...)");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = "network.dimensions." + std::to_string(i);
    if (!list[i].IsMap())
      throw InputError(file, "key '" + item + "'",
                       "expected a mapping (shape, npus, link_bandwidth_gbps, link_latency_ns, "
                       "links)");
    for (const auto& entry : list[i]) {
      const std::string key = item + "." + entry.first.Scalar();
      if (!entry.second.IsScalar())
        throw InputError(file, "key '" + key + "'", "expected a single value");
      set_key(spec, file, key, entry.second.Scalar());
    }
  }
}

}  // namespace

void apply_overrides(PlatformSpec& spec, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) {
    auto eq = o.find('=');
    if (eq == std::string::npos) throw InputError("--set", o, "expected section.key=value");
    set_key(spec, "--set", o.substr(0, eq), o.substr(eq + 1));
  }
}

Implementation implementation_from_string(const std::string& text) {
  Implementation impl;
  if (text == "tacos") {
    impl.source = Implementation::Source::Tacos;
    return impl;
  }
  for (auto [prefix, source] : {std::pair{"msccl:", Implementation::Source::Msccl},
                                std::pair{"chakra:", Implementation::Source::Chakra}})
    if (text.rfind(prefix, 0) == 0) {
      impl.source = source;
      impl.path = text.substr(std::string(prefix).size());
      if (impl.path.empty())
        throw std::invalid_argument(std::string("'") + prefix + "' needs a path after it");
      return impl;
    }
  impl.named = true;
  for (const std::string& name : per_dimension(text)) {
    try {
      impl.per_dim.push_back(collectives::algorithm_from_string(name));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(
          "unknown collective algorithm '" + name +
          "' (expected ring, direct, halving_doubling, double_binary_tree, "
          "pairwise, in_switch, route_tree, tacos, msccl:FILE, chakra:PREFIX, or one built-in "
          "name per dimension separated by commas)");
    }
  }
  impl.algorithm = impl.per_dim.front();
  if (impl.per_dim.size() == 1) impl.per_dim.clear();
  return impl;
}

std::string Implementation::name() const {
  switch (source) {
    case Source::Msccl:
      return "msccl:" + path;
    case Source::Chakra:
      return "chakra:" + path;
    case Source::Tacos:
      return "tacos";
    case Source::BuiltIn:
      break;
  }
  if (per_dim.empty()) return collectives::to_string(algorithm);
  std::string names;
  for (auto a : per_dim)
    names += (names.empty() ? "" : ",") + std::string(collectives::to_string(a));
  return names;
}

void resolve_implementation_paths(CollectiveConfig& c, const std::vector<std::string>& bases) {
  for (Implementation* impl :
       {&c.all_reduce, &c.all_gather, &c.reduce_scatter, &c.all_to_all, &c.broadcast, &c.reduce}) {
    if (impl->source == Implementation::Source::BuiltIn || impl->path.empty() ||
        fs::path(impl->path).is_absolute() || bases.empty())
      continue;
    // The file an implementation names: the XML (without its #N) or the graph's rank 0.
    auto exists = [&](const fs::path& base) {
      std::error_code ec;
      std::string path = (base / impl->path).string();
      if (impl->source == Implementation::Source::Msccl)
        return fs::exists(
            path.substr(0, path.rfind('#') == std::string::npos ? path.size() : path.rfind('#')),
            ec);
      return fs::exists(path + ".0.et", ec) || fs::exists(path + ".0.et.gz", ec);
    };
    std::string chosen = (fs::path(bases.front()) / impl->path).lexically_normal().string();
    for (const std::string& base : bases)
      if (exists(base)) {
        chosen = (fs::path(base) / impl->path).lexically_normal().string();
        break;
      }
    impl->path = chosen;
  }
}

PlatformSpec load_platform(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node root = load_yaml(path);
  if (!root.IsMap()) throw InputError(path, "", "expected a YAML mapping at the top level");
  PlatformSpec spec;
  spec.source = path;
  for (const auto& section : root) {
    std::string name = section.first.as<std::string>();
    if (name == "name") {
      if (!section.second.IsScalar())
        throw InputError(path, "key 'name'", "expected a single value");
      spec.name = section.second.Scalar();
      continue;
    }
    if (!section.second.IsMap())
      throw InputError(path, "key '" + name + "'",
                       "unknown section (expected network, fabric, npu or collectives)");
    for (const auto& entry : section.second) {
      std::string key = name + "." + entry.first.Scalar();
      if (key == "network.dimensions") {
        set_dimensions(spec, path, entry.second);
        continue;
      }
      if (!entry.second.IsScalar())
        throw InputError(path, "key '" + key + "'", "expected a single value");
      set_key(spec, path, key, entry.second.Scalar());
    }
  }
  // A file the platform names is found from the platform's folder; one given with --set, from the
  // current directory.
  resolve_implementation_paths(spec.collectives, {fs::path(path).parent_path().string()});
  apply_overrides(spec, overrides);
  check_platform(spec);
  if (spec.name.empty()) spec.name = path;
  return spec;
}

namespace {

// The platform's collective implementations, each with its key.
std::array<std::pair<const char*, const Implementation*>, 6> implementations(
    const PlatformSpec& spec) {
  return {{{"collectives.all_reduce", &spec.collectives.all_reduce},
           {"collectives.all_gather", &spec.collectives.all_gather},
           {"collectives.reduce_scatter", &spec.collectives.reduce_scatter},
           {"collectives.all_to_all", &spec.collectives.all_to_all},
           {"collectives.broadcast", &spec.collectives.broadcast},
           {"collectives.reduce", &spec.collectives.reduce}}};
}

// A network of dimensions: every dimension complete, at most kMaxNpus NPUs in all, and a list of
// per-dimension algorithms as long as the list of dimensions.
void check_dimensions(const PlatformSpec& spec) {
  const auto& n = spec.network;
  const std::string& file = spec.source;
  if (n.shape != topology::Shape::Dimensions) {
    if (!n.dims.empty())
      throw InputError(file, "network.dimensions",
                       fmt::format("given with network.topology {}: a network of dimensions "
                                   "leaves network.topology out (or sets it to dimensions)",
                                   topology::to_string(n.shape)));
  } else if (n.dims.empty()) {
    throw InputError(file, "network.dimensions",
                     "network.topology is dimensions but no dimension is listed");
  }
  double npus = 1;
  for (size_t d = 0; d < n.dims.size(); ++d) {
    const auto& dim = n.dims[d];
    const std::string item = "network.dimensions." + std::to_string(d);
    if (dim.shape == topology::Shape::Mesh)
      throw InputError(file, item + ".shape", "missing (ring, fully_connected or switch)");
    if (dim.npus < (dim.shape == topology::Shape::Switch ? 1 : 2))
      throw InputError(file, item + ".npus",
                       fmt::format("missing or too small: a {} needs at least {} NPUs",
                                   topology::to_string(dim.shape),
                                   dim.shape == topology::Shape::Switch ? 1 : 2));
    if (!(dim.link_bandwidth_gbps > 0))
      throw InputError(file, item + ".link_bandwidth_gbps", "missing: a positive GB/s is needed");
    npus *= dim.npus;
  }
  if (npus > kMaxNpus)
    throw InputError(file, "network.dimensions",
                     fmt::format("the dimensions' sizes multiply to {:g} NPUs, more than {:g} "
                                 "(docs/config.md, Limits)",
                                 npus, kMaxNpus));
  // A mesh is the grid of its columns and rows for hierarchical collectives, a tree the grid of
  // the places in a leaf and the leaves (docs/collectives.md).
  const bool grid = n.shape == topology::Shape::Mesh || n.shape == topology::Shape::Tree;
  const size_t dims = grid ? 2 : std::max<size_t>(1, n.dims.size());
  const auto& limits = spec.collectives.active_chunks_per_dim;
  if (!limits.empty() && limits.size() != dims)
    throw InputError(file, "collectives.active_chunks",
                     fmt::format("{} limits for a network of {} dimension{}: give one, or one per "
                                 "dimension",
                                 limits.size(), dims, dims == 1 ? "" : "s"));
  for (const auto& [key, impl] : implementations(spec))
    if (!impl->per_dim.empty() && impl->per_dim.size() != dims)
      throw InputError(file, key,
                       fmt::format("{} algorithms ('{}') for a network of {} dimension{}: give "
                                   "one, or one per dimension",
                                   impl->per_dim.size(), impl->name(), dims, dims == 1 ? "" : "s"));
}

// route_tree relays a broadcast or a reduce along the platform's routes from the root.
void check_route_tree(const PlatformSpec& spec) {
  for (const auto& [key, impl] : implementations(spec)) {
    if (impl->source != Implementation::Source::BuiltIn ||
        (impl->algorithm != collectives::Algorithm::RouteTree &&
         !std::count(impl->per_dim.begin(), impl->per_dim.end(),
                     collectives::Algorithm::RouteTree)))
      continue;
    if (!impl->per_dim.empty())
      throw InputError(spec.source, key,
                       fmt::format("'{}': route_tree follows the routes over the whole group, not "
                                   "a dimension's: name it alone",
                                   impl->name()));
    if (impl != &spec.collectives.broadcast && impl != &spec.collectives.reduce)
      throw InputError(spec.source, key,
                       "route_tree implements only broadcast and reduce (a tree of the routes "
                       "from the root)");
  }
}

// In-network flows (the in_switch algorithm) need Fred switches, which reduce and multicast them,
// and run at packet or message fidelity (docs/design.md, The Fred switch).
void check_flows(const PlatformSpec& spec) {
  const auto& n = spec.network;
  const std::string& file = spec.source;
  if (n.fred_switches && n.shape != topology::Shape::Tree)
    throw InputError(file, "network.switch",
                     fmt::format("fred: Fred switches are a tree's switches (network.topology: "
                                 "tree), not a {}'s",
                                 topology::to_string(n.shape)));
  for (const auto& [key, impl] : implementations(spec)) {
    const bool in_switch =
        impl->source == Implementation::Source::BuiltIn &&
        (impl->algorithm == collectives::Algorithm::InSwitch ||
         std::count(impl->per_dim.begin(), impl->per_dim.end(), collectives::Algorithm::InSwitch));
    if (!in_switch) continue;
    if (!impl->per_dim.empty())
      throw InputError(file, key,
                       fmt::format("'{}': in_switch is one flow over the whole group, not a "
                                   "dimension's algorithm: name it alone",
                                   impl->name()));
    if (impl == &spec.collectives.all_to_all)
      throw InputError(file, key,
                       "in_switch: an all-to-all is unicasts, not a flow (use direct or pairwise)");
    if (!n.fred_switches)
      throw InputError(file, key,
                       "in_switch: in-network flows need switches that reduce and multicast: a "
                       "tree of Fred switches (network.topology: tree, network.switch: fred; "
                       "docs/collectives.md, In-network flows)");
    if (spec.fabric.fidelity == hw::Fidelity::Flit)
      throw InputError(file, key,
                       "in_switch: in-network flows run at fabric.fidelity: packet or message, "
                       "not flit (a switch reduces whole packets; docs/design.md, The Fred "
                       "switch)");
  }
  // A Fred switch's flows keep to their class's VC and take it only while it is free: they do not
  // wait for a tail's credit (docs/design.md).
  if (n.fred_switches && spec.fabric.vc_release_on_tail_credit)
    throw InputError(file, "fabric.vc_release",
                     "tail_credit is modelled in routers, not in Fred switches (network.switch: "
                     "fred): use tail_sent");
}

// Go-Back-N and fault injection act on packets: packet fidelity only; a link that loses more
// than half of what it carries would leave a run mostly resending.
void check_link_retry(const PlatformSpec& spec) {
  const auto& f = spec.fabric;
  const std::string& file = spec.source;
  const bool faults = f.drop_probability > 0 || f.corrupt_probability > 0;
  if (faults && !f.go_back_n)
    throw InputError(
        file,
        f.drop_probability > 0 ? "fabric.link_drop_probability" : "fabric.link_corrupt_probability",
        "a link that loses packets needs fabric.link_retry: go_back_n to send them "
        "again");
  if (f.go_back_n && f.fidelity != hw::Fidelity::Packet)
    throw InputError(file, "fabric.link_retry",
                     fmt::format("go_back_n numbers and resends packets: it runs at "
                                 "fabric.fidelity: packet, not {}",
                                 hw::to_string(f.fidelity)));
  if (f.drop_probability + f.corrupt_probability > 0.5)
    throw InputError(file, "fabric.link_drop_probability + fabric.link_corrupt_probability",
                     fmt::format("{:g} + {:g} is above 0.5: most packets would be lost",
                                 f.drop_probability, f.corrupt_probability));
}

}  // namespace

void check_platform(const PlatformSpec& spec) {
  const auto& n = spec.network;
  const auto& f = spec.fabric;
  const std::string& file = spec.source;
  if (n.shape == topology::Shape::Mesh &&
      static_cast<double>(n.mesh_x) * static_cast<double>(n.mesh_y) > kMaxNpus)
    throw InputError(file, "network.mesh_x x network.mesh_y",
                     fmt::format("a {} x {} mesh has more than {:g} NPUs (docs/config.md, Limits)",
                                 n.mesh_x, n.mesh_y, kMaxNpus));
  check_dimensions(spec);
  if (n.injection_bandwidth_gbps > 0 && n.injection_bandwidth_gbps < kMinBandwidthGbps)
    throw InputError(
        file, "network.injection_bandwidth_gbps",
        fmt::format("must be 0 (the sum of the router's links) or at least {:g}, got {:g}",
                    kMinBandwidthGbps, n.injection_bandwidth_gbps));
  check_flows(spec);
  check_route_tree(spec);
  if (spec.collectives.ring_path == CollectiveConfig::RingPath::MeshCycle &&
      n.shape != topology::Shape::Mesh)
    throw InputError(file, "collectives.ring_path",
                     fmt::format("mesh_cycle follows a cycle of a mesh's links; this network is "
                                 "a {}",
                                 topology::to_string(n.shape)));
  if (f.packet_bytes < f.flit_bytes)
    throw InputError(file, "fabric.packet_bytes",
                     fmt::format("a packet of {} bytes is smaller than one flit ({} bytes, "
                                 "fabric.flit_bytes)",
                                 f.packet_bytes, f.flit_bytes));
  const uint64_t packet_flits =
      (static_cast<uint64_t>(f.packet_bytes) + f.header_bytes + f.flit_bytes - 1) / f.flit_bytes;
  check_link_retry(spec);
  if (f.fidelity == hw::Fidelity::Packet && packet_flits > f.buffer_flits)
    throw InputError(file, "fabric.buffer_flits",
                     fmt::format("packet fidelity moves whole packets (virtual cut-through): a "
                                 "packet of {} flits does not fit a VC buffer of {} flits",
                                 packet_flits, f.buffer_flits));
}

}  // namespace wafersim::tb
